// Package framework is allot's Spark-like runtime: a Go API for jobs over
// partitioned datasets that runs on any Mesos v1 master (allot first) or, for
// development, in one process.
//
// The same binary is driver and executor. The driver (Context) is a Mesos
// framework built on framework/sched; it launches long-running executors
// (Spark's coarse-grained mode) as Mesos tasks whose custom ExecutorInfo
// command is the application binary itself, switched into executor mode by
// an environment variable: an application calls framework.Main() first thing
// in main, which never returns in an executor. Tasks then go from the driver
// to executors directly over HTTP; Mesos never sees them.
//
// Functions that run remotely are registered by name (Register, in init) the
// same way in every process, so nothing but names, arguments and data is
// shipped. Records are Go values of a small closed set of types (string,
// int, int64, float64, bool, []float64, []any, KV and nil) with a compact
// binary codec; shuffles need KV records whose keys are comparable scalars.
//
// Jobs split into a DAG of stages at shuffles. Executors run tasks up to
// their cores at once, keep cached partitions and shuffle outputs in a block
// manager under a memory limit (spilling to disk), serve blocks to each other
// over HTTP, report per-task metrics, and measure their own CPU, memory, disk
// and network use every second from /proc and their sockets. The driver
// places tasks with locality, retries failures, recomputes lost partitions
// from lineage when an executor dies, scales executors dynamically, and
// writes a JSON-lines event log per application run (see eventlog.go).
package framework
