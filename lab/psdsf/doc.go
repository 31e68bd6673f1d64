// Package psdsf reproduces the PS-DSF paper (Shan et al.) for `allot
// experiment psdsf-table1` and `psdsf-online`: its Table 1 by progressive
// filling through the real allocator (psdsf_table1.go: x[n,i], spreads and
// unused capacity per scheduler), and its online Mesos experiment in the
// simulator (online.go: the Pi and WordCount queues on the heterogeneous
// and homogeneous clusters, each claim judged against the runs).
package psdsf
