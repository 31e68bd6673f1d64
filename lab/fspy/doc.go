// Package fspy reproduces section IV.C of the FSPY paper (Liu, Zeng, Piao)
// for `allot experiment fspy`: the SWIM trace cut into windows, each run
// alone under fair, capacity, fspy, fsp and fifo (fspyexp.go), the paper's
// metrics (slowdown.go: response time, common and fair slowdown, offered
// load and its groups) and the report's files (fspyout.go). The sizes,
// probes and application masters it runs with are the simulator's own
// (sim's SizeOptions, AMShare and TraceOptions.AMMemMB).
package fspy
