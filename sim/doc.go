// Package sim is allot's discrete-event simulator: the engine behind
// `allot sim`, and the one the lab's reproductions build on. It drives the
// real allocator package exactly as the master does (offers, accepts,
// declines with filters, recoveries, suppress and revive) in virtual time,
// so what it reports is what a master with the same flags would do;
// engine.go's comment states the model, including how tasks slow down
// when agents' disk or network bandwidth is oversubscribed.
//
// The engine is engine.go (setup and the event loop), engine_demand.go
// (what frameworks want), engine_offers.go (offers answered, tasks run) and
// engine_check.go. Its workload is workload.go's jobs and nodes, made by
// sim/trace's readers or by the generators of generate.go; its outputs are
// the metrics of metrics.go (makespan, JCT percentiles, waiting,
// utilisation, Jain's index, ratio to a lower bound), with the one Mean,
// StdDev, Median and Round of stats.go. sim/report writes them as a table,
// JSON, CSV series and SVG plots (sim/plot).
//
// The engine also models what the product's policies need to be simulated
// faithfully: job sizes for the fsp and fspy sorters (fsp.go, with fspy's
// probing jobs in probe.go and the SWIM features its predictor sees in
// swimfeatures.go), YARN's per-job application masters held to the job's
// end under maxAMShare (am.go), and jobs that share nodes without isolation
// for the co-location bandit (interference.go; Config.Interference, off by
// default), and roles: weights, quota and reservations from a roles file
// (roles.go, reservations.go), with what each role got (rolestats.go).
//
// The papers' experiments are not here: they are under lab/ and use this
// package through its exported API.
package sim
