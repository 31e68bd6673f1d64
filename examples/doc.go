// Package examples holds the framework's example applications (wordcount,
// kmeans, pagerank, each a main package in its own directory) and the tests
// that run them on a real allot cluster against independent references.
// internal/testapp is an application only the tests run, whose phases they
// can watch and pace (dynamic allocation, declining offers).
package examples
