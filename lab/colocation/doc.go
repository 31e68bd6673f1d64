// Package colocation reproduces the co-location bandit paper (Thamsen et
// al.) for `allot experiment colocation`: its node, job types and queues
// as profiles of the simulator's interference model, the pairwise
// calibration of that model (colocation.go), the queue experiment under
// FIFO, RA, RA* and random-in-window (colocation_experiment.go) and the
// diagnostics of why learning does or does not help (colocation_diag.go).
package colocation
