// Package lab holds allot's research lab, kept apart from the product (the
// master, agent, allocator, framework runtime and the `allot sim`
// engine): the papers' reproductions behind `allot experiment` and the
// scale harness behind `allot bench cluster`.
//
//   - psdsf: the PS-DSF paper's Table 1 by progressive filling and its
//     online Mesos experiment;
//   - prophet: Prophet's executor-application simulator (predicted
//     profiles, gangs, backoff, framework placement);
//   - fspy: the FSPY paper's windows, slowdowns and size prediction;
//   - colocation: the co-location bandit's node, job types, queues,
//     calibration and diagnostics;
//   - ispark: iSpark's iterative-application simulator;
//   - scalebench: real masters under thousands of simulated agents.
//
// Dependencies point one way: lab packages import the product; no product
// package imports lab (boundary_test.go checks it).
package lab
