// Package api holds allot's own protobuf types: the typed commands of the
// replicated registry (each with a stable numeric id, see CommandType), the
// records a registry snapshot streams, and the agent protocol between master
// and agents. Mesos v1 types come from mesos-go and travel inside these
// messages in their protobuf encoding.
//
// AppDemand is Prophet's application demand on the wire (E executors, their
// cpus/mem, the stage profile). It rides in the Mesos REQUEST call as the
// "allot.app_demand" pseudo-resource (demand.go: AppDemandResource,
// SplitAppDemand), and converts to and from the pure profile package's
// types here, so that profile stays a leaf without protobuf or mesos-go.
//
// JobSize is a framework's head job for the size-based sorters (fsp,
// fspy): its size in MB x s, known, predicted or unknown, its APB and AM
// memory. It travels as FrameworkInfo labels (allot.job_id, allot.job_size,
// allot.job_size_kind, allot.job_apb_mb, allot.job_am_mb) or as the
// "allot.job" REQUEST pseudo-resource of key=value items with the same
// keys; one parser validates both and its errors name the key (jobsize.go).
//
// Usage is an agent's report of cumulative counters (CPU time by mode, disk
// and network bytes, disk busy time, per executor CPU and I/O);
// RatesBetween (rates.go) turns two successive reports into fractions and
// MB/s, refusing rather than guessing when no time passed or a host
// counter went backwards.
//
// Timelines (timelines.go) is the JSON of the master's GET /timelines: each
// agent's predicted availability of disk_bw and net_bw with the executors
// anchored on it, which AgentTimeline.Timeline rebuilds into a
// profile.Timeline so a framework scores with the master's math.
//
// UnsupportedContainer (containers.go) is what of a task's or executor's
// ContainerInfo allot cannot provide (the DOCKER containerizer; networks
// are the agent's to check against its CNI networks): the master answers
// such a task TASK_ERROR, an agent TASK_FAILED.
//
// Regenerate allot.pb.go with:
//
//	protoc --go_out=. --go_opt=paths=source_relative allot.proto
//
// (protoc from the protobuf-compiler package, protoc-gen-go from
// google.golang.org/protobuf/cmd/protoc-gen-go). The generated file is
// committed so that builds need neither.
package api

//go:generate protoc --go_out=. --go_opt=paths=source_relative allot.proto
