// Package elastic decides how an application's executor pool should change:
// which executors to release, which cached partitions to move between
// executors before a release, and how many executors to add.
//
// A Policy is a pure function of the time and a snapshot of the pool: no
// clocks, goroutines or I/O, so the driver, a test and the simulator can all
// ask it the same question and get the same answer. Whatever state a policy
// carries from one decision to the next (how long a backlog has lasted, say)
// goes out in the Decision and comes back in the next Pool. The driver's
// executor pool is the thin shell that takes a snapshot under its lock,
// asks, and acts on the answer.
//
// IdleBacklog is the driver's rule since dynamic allocation existed (Spark's):
// add executors, doubling the step, while a task backlog outlasts a timeout;
// release executors idle for a timeout that hold no cached data. iSpark's
// utilisation-driven scale-down is ISpark (ispark.go; its packing and
// cache handoff in ispark_pack.go), the first policy to fill Moves: it
// reads the executors' utilisation, U_max and cache maps and whether other
// applications wait in the cluster, and says which executors give, which
// receive, and which partitions move before a giver is released.
package elastic
