// Package testcluster is the harness the process-level test suites share
// (integration/ and examples/): it builds the allot binary and whatever
// else a suite runs once per test binary (Main), starts masters and agents
// as real processes on loopback (New, StartMaster, StartAgent), and cleans
// up after them: every process runs in its own process group and is
// killed with it, executors that outlive their agent are found by their
// sandbox and killed, and when a test fails the tail of each process's
// output and of each sandbox's stdout/stderr is logged.
//
// It also holds the two small helpers every such test needs, FreePort and
// WaitFor, which unit tests elsewhere (framework/sched) use too. The
// package imports only the standard library: it talks to the master over
// HTTP, so a test suite of any layer may use it without importing
// master/, agent/ or allocator/.
//
// ALLOT_RACE=1 in the environment builds the allot binary with the race
// detector; a process whose output reports a data race fails the test that
// started it.
package testcluster
