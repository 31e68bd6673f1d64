// Package loglevel is the process's logging verbosity as Mesos's
// GET_LOGGING_LEVEL and SET_LOGGING_LEVEL see it: a glog-style level
// (0 is the level the process was started with, each step above it one
// zerolog level more verbose) that SET_LOGGING_LEVEL raises or lowers for
// a duration, after which it reverts to the level the process started
// with. A new SET replaces the previous one and its pending revert, as in
// Mesos.
//
// The level applies through an apply function: the process's own control
// (cmd/allot) sets zerolog's global level, which bounds every logger the
// process made (they are built at zerolog.TraceLevel, so the global level
// alone decides). A master or agent embedded in another program gets a
// control that records the level and changes no output, because the
// global level belongs to the program, not to the library.
//
// The package imports only zerolog and the standard library.
package loglevel
