// Package trace turns files and specs into the simulator's workloads: the
// documented CSV formats for jobs and nodes (csv.go), the shared SWIM and
// Alibaba 2017 traces with the models stated in traces.go, cluster specs
// and presets (cluster.go), and the what-if knobs that reshape any of them
// (whatif.go: arrivals, durations, a sample or copies of the nodes).
//
// Every reader reports bad input as an InputError naming file, line,
// column and value: headed CSV through table, the headerless traces
// through lines, which share its shape.
package trace
