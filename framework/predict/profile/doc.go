// Package profile is Prophet's demand predictor (the paper's section II.B):
// it learns, per recurring application and per stage, an executor's stage
// start and end offsets from its launch and its peak disk and network
// bandwidth from earlier runs' event logs, and predicts them for a new
// setting (cores per executor, input size) as a profile.AppDemand that the
// framework declares in its REQUEST.
//
// The paper feeds 25 profiling runs to an SVM with linear regression. This
// package fits ordinary least squares per stage and per target (start, end,
// disk peak, net peak) on the features
//
//	x = [1, G, 1/c, G/c, c],  G = input GiB, c = cores per executor
//
// because a data-parallel stage's time is a fixed cost plus work linear in
// its input divided among the executor's cores (1, G/c; 1/c for per-task
// costs), while an executor's peak bandwidth grows with the cores that
// drive it in parallel (c) and with the data per task (G). A log-input
// feature ([1, ln(1+MiB), 1/c, ln/c]) was the first candidate; on the test
// family (TestHeldOutAccuracy, whose times are linear in input, so the
// comparison favours this choice) its held-out median error was several
// times that of these features (docs/prophet.md), so it was dropped. Five coefficients
// need at least MinRuns runs of a stage at distinct settings whose design
// is not singular (runs that all share one core count make 1/c and c
// collinear with 1); otherwise the
// stage falls back to the nearest observed setting (distance |ΔL| +
// |Δ log2 c|), which is also what the paper says suffices when a setting
// recurs unchanged.
//
// A run contributes one observation per stage key (eventlog's stage_key,
// stable across runs): offsets are the mean over the executors that ran the
// stage, peaks the maximum over them (a profile is a reservation, and the
// busiest executor is the one that over-allocates a server). Predictions are
// clamped to >= 0 and made into a valid profile: stages sorted by start,
// a stage that would overlap its predecessor starts at the predecessor's
// end, and one that would not last lasts MinStage. Bandwidths are MiB/s
// (the log's B/s divided by 2^20).
//
// The model is plain data (Model), saved and loaded as JSON; it does no I/O.
// LoadDir is the small loader that reads a directory of logs.
package profile
