// Package profile holds Prophet's scoring math (Xu, Xu, Jiang, "Prophet:
// Scheduling Executors with Time-varying Resource Demands", papers/), once,
// for both the allocator's prophet sorter and the framework library's
// placement. It is a pure leaf: the standard library only, no I/O, no
// clocks (every time is passed in), no goroutines.
//
// It owns three things:
//
//   - Demand profiles. A Profile is an executor's predicted stages k =
//     0..n-1, each with start and end offsets from the executor's launch and
//     peak disk_bw and net_bw (MB/s); an AppDemand adds the executor count E
//     and the per-executor cpus and mem. Validate names the bad field
//     ("stages[2].end: before start") so the master can answer 400 with it.
//   - Timelines. A Timeline is one server's predicted availability of both
//     bandwidths: capacity minus the peaks of its running executors'
//     profiles, anchored at their launches (the paper's Fig. 4), as a
//     compact sorted breakpoint slice in fixed point (thousandths of MB/s, as
//     resources.Quantity), so add and remove are exact inverses.
//   - The score. Timeline.Score places a candidate executor at now and
//     measures the weighted fragmentation area F and over-allocation area O
//     between its demand and the availability (eqs. 1-7, w_k = 1 - k/n),
//     OverallScore_r = (1-eta) O_r + eta F_r (eq. 8, eta 0.3), and the
//     Euclidean norm across disk and network. AppScore combines an
//     application's E per-server norms.
//
// # Where the paper is silent, and what this package decides
//
// Negative availability. Running peaks can sum above capacity (another
// policy placed them, or predictions were low). Timelines report the signed
// value; the score clamps it at zero, so O is the candidate's own demand that
// the server cannot serve, and a stage with no demand during an overload
// costs nothing (see Timeline.Score).
//
// Normalisation across disk and network. NormPaper (the default) takes the
// norm of raw areas in MB, as the paper does; NormCapacity divides each
// resource's F and O by the server's capacity first, so a 330 MB/s disk and
// a 125 MB/s NIC count alike (a variant beyond the paper). Both are
// Options, so experiments can compare them.
//
// Combining E per-server scores. The paper compares executors and places
// all E of an application at once on distinct servers, but never says how
// the E scores become one. CombineMean (default) averages them so that
// applications of different E compete on equal terms; CombineSum and
// CombineMax are there to compare. Choosing the E servers (the E best-scored
// servers whose cpu/mem fits, all or none) is the allocator's gang path.
//
// Time. Offsets are time.Duration and anchors time.Time (stored as Unix
// nanoseconds): integer time makes coinciding stage boundaries of different
// executors one breakpoint, and the allocator's injected clock is a
// time.Time. Gaps between stages are allowed, mean no demand, and are not
// scored (eqs. 1-2 sum over stages). After its last stage an executor is
// predicted to use nothing; Timeline.Reanchor shifts a running executor's
// prediction when its observed stage progress differs (beyond the paper).
//
// Empty profiles. An AppDemand with no stages is valid ("no prediction
// yet") and scores 0 on every server; a policy decides what that means.
package profile
