// Package prophet is the executor-application simulator behind `allot
// experiment prophet`: applications of executors that hold their cpus and
// mem while stages with their own disk and network demand run inside them,
// declared to the real allocator as gangs with predicted profiles (apps.go,
// apps_generate.go), with Prophet's backoff (backoff.go), framework-side
// placement (apps_fwplace.go), diagnostics (apps_diag.go) and the paper's
// comparison (apps_experiment.go).
package prophet
