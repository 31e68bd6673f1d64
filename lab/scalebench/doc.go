// Package scalebench is the scale harness behind `allot bench cluster`: real
// master processes on loopback, thousands of simulated agents in this one
// process speaking the real agent protocol over real HTTP (no executors: a
// launched task "runs" for a drawn duration and reports TASK_FINISHED), and
// frameworks built on framework/sched launching and finishing small tasks.
// It measures what the master does under that load (registration time,
// offer latency, launch throughput, status update latency, the master's CPU
// and RSS, raft commit latency) and, optionally, a kill -9 of the leader.
//
// It imports the master only through its wire protocols (api, mesos-go), so
// it measures the master as clients see it.
package scalebench
