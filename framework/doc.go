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
// Generic functions see one boxed record at a time, which costs an
// allocation or two per record. Counting jobs can register the bytes shapes
// instead: a PairsFunc flatMap gets text lines straight from the read
// buffer and emits (key bytes, int64) pairs, and ReduceByKey with an
// Int64ReduceFunc then combines them map-side, and reduces them after the
// shuffle, in unboxed counters that allocate only for new keys (wordcount
// runs at the speed of a plain Go loop this way).
//
// Jobs split into a DAG of stages at shuffles. Executors run tasks up to
// their cores at once, keep cached partitions and shuffle outputs in a block
// manager under a memory limit (spilling to disk; a cached partition in
// memory whose records are scalars, strings or KVs of them is decoded once
// and its records shared by later reads, as Spark's MEMORY_ONLY keeps it
// deserialized), serve blocks to each other over HTTP, report per-task metrics, and measure their own CPU, memory, disk
// and network use every second from /proc and their sockets. The driver
// places tasks with locality, retries failures, recomputes lost partitions
// from lineage when an executor dies, scales executors dynamically, and
// writes a JSON-lines event log per application run (its schema, writer and
// reader are package framework/eventlog).
//
// The decisions the driver makes are pure policies in their own packages,
// so a test or the simulator can drive them without processes or clocks:
// where a task runs (framework/dispatch: a Dispatcher, today LocalityWait)
// and how the executor pool scales (framework/elastic: a Policy, today
// IdleBacklog, or ISpark). The driver is the shell around them: it snapshots its state
// under its lock, asks, and acts. Time comes from an injected Clock.
//
// Prophet's framework side: an application that declares its
// executors' demand profile (Config.Profile, or Config.DemandModel's
// prediction) may also choose its agents by Prophet's score
// (Config.Placement "prophet": framework/placement, against the master's GET
// /timelines plus its own executors; prophet.go) and back off tasks on an
// agent whose disk or network collapses while busy (Config.Backoff: a
// dispatch.Backoff fed from the master's /state usage rates; backoff.go).
// Both default off, leaving the behaviour above unchanged.
//
// For iSpark the driver also measures each executor's utilisation per
// monitoring epoch (utilisation.go), hears "others are waiting" from the
// master's inverse offers (mesos_inverse.go) and carries out scale-downs
// that keep cached data: receivers fetch a giver's partitions (POST
// /fetch), the driver reads them there, and only then releases the giver,
// at a job boundary (handoff.go, ispark_inputs.go).
package framework
