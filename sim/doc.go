// Package sim is allot's discrete-event simulator and experiment harness.
// It drives the real allocator package exactly as the master does (offers,
// accepts, declines with filters, recoveries, suppress and revive) in
// virtual time, so what it reports is what a master with the same flags
// would do; engine.go's comment states the model, including how tasks slow
// down when agents' disk or network bandwidth is oversubscribed.
//
// Inputs are jobs and nodes: the documented CSV formats (csv.go), the
// shared SWIM and Alibaba 2017 traces with the models stated in traces.go,
// and generators that follow the papers' setups (generate.go); whatif.go
// reshapes any of them (arrivals, durations, a sample or copies of the
// nodes) for "what if" questions. Outputs are
// the metrics of metrics.go (makespan, JCT percentiles, waiting, utilisation,
// Jain's index, ratio to a lower bound), a text table, JSON, CSV series and
// SVG plots (report.go, plot/).
//
// The papers' experiments live here too: the PS-DSF paper's Table 1 by
// progressive filling (psdsf_table1.go) and its online Mesos experiment
// (online.go). For the FSPY paper, slowdown.go has its metrics (response
// time, common and fair slowdown, prediction R^2) and its workload method
// (windows of consecutive jobs grouped by offered load), and
// swimfeatures.go the features its size predictor sees of a SWIM job;
// am.go runs YARN's per-job application masters (held to the job's end,
// admitted under maxAMShare) and probe.go fspy's probing jobs in their
// queue.
// For the co-location bandit, interference.go is a model of jobs that
// share nodes without isolation (cores contended, I/O wait, usage samples
// given to the allocator; Config.Interference, off by default) and
// colocation.go the paper's node, job types, queues and the pairwise
// calibration of the model. For iSpark, iterative.go is the
// iterative-application model (executors whose utilisation diminishes over
// iterations, cached partitions, moving against recomputing) and ispark.go
// runs it with framework/elastic's own policies against the allocator's
// inverse offers (ispark_experiment.go: `allot experiment ispark`).
package sim
