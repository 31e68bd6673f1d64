// Package integration holds tests across real processes: the allot binary
// built once per run, masters and agents on loopback ports with temporary
// work dirs, frameworks written with mesos-go's scheduler client, a custom
// executor built from mesos-go's executor library (testexec), and mesos-go's
// own msh and mwatch. mesos-go's example framework (example-scheduler and
// example-executor) is built from a nested module, testdata/mesosgo-example,
// by the one test that runs it. Every process a test starts runs in its own process
// group and is killed in t.Cleanup; executors, which agents start in groups of
// their own, are found by their sandbox under the test's temp dir and killed
// too.
package integration
