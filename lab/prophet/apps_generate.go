package prophet

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// ProphetArchetype is one of the paper's ten benchmarks as the simulator
// models it: its stages at the small input with 5 cores per executor, each
// a share of the executor's work and its disk and network peaks (MB/s).
type ProphetArchetype struct {
	Name string
	// Work is an executor's seconds at full speed on the small input with 5
	// cores.
	Work   float64
	Stages []ArchetypeStage
}

// ArchetypeStage is a share of an archetype's work and its demand.
type ArchetypeStage struct {
	Share         float64
	DiskBW, NetBW float64
}

// ProphetArchetypes are modelled on the paper's Figs. 1-2 (K-means, SVM,
// PageRank, SVD++ measured; the other six by their description): the
// machine-learning jobs read their input at near the disk's 300 MB/s, then
// iterate with little I/O, then aggregate over the network at up to about
// 160 MB/s; the graph jobs are network-heavy while they iterate; the
// sorts are disk-heavy at both ends with a network shuffle between; grep
// and wordcount scan. The works follow Table I's input sizes only
// loosely: the graph benchmarks have small inputs but long iterations.
var ProphetArchetypes = []ProphetArchetype{
	{"kmeans", 240, []ArchetypeStage{{0.25, 280, 5}, {0.6, 10, 20}, {0.15, 30, 150}}},
	{"svm", 300, []ArchetypeStage{{0.3, 300, 5}, {0.55, 5, 10}, {0.15, 20, 160}}},
	{"pagerank", 260, []ArchetypeStage{{0.15, 200, 10}, {0.7, 40, 120}, {0.15, 150, 5}}},
	{"svd++", 320, []ArchetypeStage{{0.1, 150, 5}, {0.8, 20, 80}, {0.1, 100, 5}}},
	{"lr", 280, []ArchetypeStage{{0.3, 290, 5}, {0.6, 10, 15}, {0.1, 10, 140}}},
	{"trianglecount", 220, []ArchetypeStage{{0.2, 120, 10}, {0.6, 10, 100}, {0.2, 60, 5}}},
	{"terasort", 240, []ArchetypeStage{{0.4, 300, 20}, {0.3, 100, 150}, {0.3, 280, 5}}},
	{"wordcount", 200, []ArchetypeStage{{0.7, 250, 5}, {0.3, 40, 60}}},
	{"sort", 240, []ArchetypeStage{{0.35, 300, 10}, {0.35, 80, 150}, {0.3, 300, 5}}},
	{"grep", 160, []ArchetypeStage{{0.9, 320, 2}, {0.1, 5, 20}}},
}

// ProphetSetup is the paper's evaluation (Section IV): 16 servers of 24
// cores, 32 GB, a 330 MB/s disk (three 110 MB/s drives) and a 1 Gbps NIC
// (125 MB/s); 90 applications, the 10 archetypes x 3 input sizes x 3 core
// counts per executor {1, 3, 5}, arriving uniformly in [0, 1200] s.
//
// Where the paper is silent (DefaultProphetWorkload, calibrated): every
// application has 6 executors of 4 GB (so memory admits 8 executors per server); an input size doubles the
// work (small, medium, large as Table I); an executor of c cores works
// (5/c)^0.8 times as long as one of 5 and demands (c/5)^0.8 of its
// bandwidth (sub-linear scaling of a JVM's threads). Predicted profiles
// err by up to predErr (Predict).
func ProphetSetup(seed uint64, predErr float64) ([]App, []AppNode) {
	return ProphetSetupWith(seed, predErr, DefaultProphetWorkload)
}

// ProphetWorkload holds the knobs of ProphetSetup that the paper leaves
// open; DefaultProphetWorkload documents the calibrated values.
type ProphetWorkload struct {
	WorkScale float64 // multiplies every archetype's Work
	Executors int     // executors per application
	ExecMem   float64 // MB per executor
	// SizeFactor is the work ratio between successive input sizes.
	SizeFactor float64
	// SlowExp and BWExp: a c-core executor works (5/c)^SlowExp as long as
	// one of 5 cores and demands (c/5)^BWExp of its bandwidth.
	SlowExp, BWExp float64
}

// DefaultProphetWorkload is calibrated on the baselines only (capacity,
// drf, tetris-peak; never on Prophet's result), seeds 1-2, 10 % prediction
// error, against Table III's ratios DRF/CS = 1.106 and Tetris/CS = 1.538
// and CS's absolute 16,604 s. Scanned: beta {0.15, 0.3, 0.4, 0.5} x
// Executors {4, 6, 7} x ExecMem {4096, 8192}; chosen, with what it gave:
//
//   - Executors 6 (was 4): Tetris/CS 1.50 at beta 0.3 (1.18 with 4). With
//     4 executors CS ran few enough applications at once that the peak
//     reservations of tetris-peak cost little; 6 per application is what
//     makes lifetime-peak packing fragment (its overalloc fraction stays
//     0.04 while its bandwidth utilisation is the lowest).
//   - ExecMem 4096 MB (8 executors per server by memory): 8192 makes DRF
//     and CS identical (memory dominates both shares), 1.000 against 1.106;
//     4096 gives DRF/CS 1.046, the closest of the scan (shortfall stated).
//   - Beta 0.3 (DefaultBeta; was 0.5): 0.5 gives Tetris/CS 1.37 and CS
//     18,028 s; 0.3 gives 1.50 and 16,374 s; 0.15 over-shoots to 1.67.
//     CS and DRF over-allocate in 0.71-0.73 of agent-steps, tetris-peak in
//     0.04: the Figs. 9-10 picture.
//   - WorkScale 1, SizeFactor 2, SlowExp 0.8, BWExp 0.8: unchanged; CS's
//     16,374 s is within 2 % of 16,604 without rescaling.
//   - Prediction error 0.1 (the experiment's --pred-error default).
//
// tetris-peak caps a peak at the device's capacity (the net peaks of
// 150-160 MB/s exceed a 125 MB/s NIC): such an executor still reserves
// the whole NIC, so the cap hides no fragmentation; without it the
// executor could never be placed.
var DefaultProphetWorkload = ProphetWorkload{WorkScale: 1, Executors: 6, ExecMem: 4096, SizeFactor: 2, SlowExp: 0.8, BWExp: 0.8}

// ProphetSetupWith is ProphetSetup with the workload knobs w.
func ProphetSetupWith(seed uint64, predErr float64, w ProphetWorkload) ([]App, []AppNode) {
	nodes := make([]AppNode, 16)
	for i := range nodes {
		nodes[i] = AppNode{Cpus: 24, Mem: 32768, DiskBW: 330, NetBW: 125}
	}
	rng := rand.New(rand.NewPCG(seed, 0x70726f70))
	var apps []App
	for _, a := range ProphetArchetypes {
		for size, sname := range []string{"small", "medium", "large"} {
			for _, cores := range []float64{1, 3, 5} {
				slow := math.Pow(5/cores, w.SlowExp)
				bw := math.Pow(cores/5, w.BWExp)
				app := App{
					Name:    fmt.Sprintf("%s-%s-%gc", a.Name, sname, cores),
					Arrival: math.Round(rng.Float64() * 1200), Executors: w.Executors, Cpus: cores, Mem: w.ExecMem,
				}
				work := a.Work * w.WorkScale * math.Pow(w.SizeFactor, float64(size)) * slow
				for _, s := range a.Stages {
					app.Stages = append(app.Stages, AppStage{Work: work * s.Share, DiskBW: s.DiskBW * bw, NetBW: s.NetBW * bw})
				}
				apps = append(apps, app)
			}
		}
	}
	Predict(apps, predErr, seed)
	return apps, nodes
}
