// Package ispark is the iterative-application simulator behind `allot
// experiment ispark`: executors whose utilisation diminishes over
// iterations, cached partitions, and moving against recomputing
// (iterative.go states the model), run with framework/elastic's own
// policies against the allocator's inverse offers (ispark.go,
// ispark_policy.go, ispark_cache.go, ispark_idle.go) and compared as the
// paper does (ispark_experiment.go).
package ispark
