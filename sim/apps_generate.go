package sim

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
// Where the paper is silent: every application has 4 executors of 4 GB
// (so memory admits 8 executors per server); an input size doubles the
// work (small, medium, large as Table I); an executor of c cores works
// (5/c)^0.8 times as long as one of 5 and demands (c/5)^0.8 of its
// bandwidth (sub-linear scaling of a JVM's threads). Predicted profiles
// err by up to predErr (Predict).
func ProphetSetup(seed uint64, predErr float64) ([]App, []AppNode) {
	nodes := make([]AppNode, 16)
	for i := range nodes {
		nodes[i] = AppNode{Cpus: 24, Mem: 32768, DiskBW: 330, NetBW: 125}
	}
	rng := rand.New(rand.NewPCG(seed, 0x70726f70))
	var apps []App
	for _, a := range ProphetArchetypes {
		for size, sname := range []string{"small", "medium", "large"} {
			for _, cores := range []float64{1, 3, 5} {
				slow := math.Pow(5/cores, 0.8)
				bw := math.Pow(cores/5, 0.8)
				app := App{
					Name:    fmt.Sprintf("%s-%s-%gc", a.Name, sname, cores),
					Arrival: math.Round(rng.Float64() * 1200), Executors: 4, Cpus: cores, Mem: 4096,
				}
				work := a.Work * float64(int(1)<<size) * slow
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
