package colocation

import (
	"fmt"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
)

// The co-location paper's setup (Thamsen et al., sections 3 and 6) for the
// interference model: its node, its four job types as phased profiles, and
// the pairwise calibration.
//
// Profiles, from the paper's descriptions and set so that Calibrate comes
// near its pairwise measurements (Tables 2-3, Fig. 4); its queue results
// (Tables 5-6) were not looked at to set them. Per task (one container of
// one core; it may use idle cores):
//
//   - KM (K-Means): iterations of a CPU-heavy step (1.2 cores) and a short
//     synchronisation with little CPU and some network; "CPU-intensive,
//     distinct iterations with phases where CPU is almost unused".
//   - CC (Connected Components): a first stage limited by the disk, then
//     CPU-heavy iterations; network "used considerably all over".
//   - Q10 (TPC-H Query 10): disk- and network-bound, CPU "almost never
//     exceeds a mean of 50%".
//   - Q3 (TPC-H Query 3): the paper has no pairwise measurement of it; it
//     is Q10's shape with less data (shorter phases), uncalibrated.
//
// Work per phase is seconds at full speed; stages run one after another.

// ColocationTypes are the paper's four job types.
var ColocationTypes = []string{"KM", "CC", "Q10", "Q3"}

type colocationStage struct {
	work  float64
	phase sim.Phase
}

var colocationStages = map[string][]colocationStage{
	"KM": repeatStages(5, []colocationStage{
		{60, sim.Phase{CPU: 1.2}},
		{15, sim.Phase{CPU: 0.2, NetMBps: 20}},
	}),
	"CC": append([]colocationStage{{100, sim.Phase{CPU: 0.5, DiskMBps: 130, NetMBps: 20}}},
		repeatStages(3, []colocationStage{{70, sim.Phase{CPU: 1.0, NetMBps: 25}}})...),
	"Q10": {
		{200, sim.Phase{CPU: 0.4, DiskMBps: 125, NetMBps: 10}},
		{100, sim.Phase{CPU: 0.5, DiskMBps: 40, NetMBps: 40}},
		{50, sim.Phase{CPU: 0.6, DiskMBps: 20, NetMBps: 10}},
	},
	"Q3": {
		{120, sim.Phase{CPU: 0.35, DiskMBps: 110, NetMBps: 10}},
		{60, sim.Phase{CPU: 0.5, DiskMBps: 30, NetMBps: 35}},
	},
}

func repeatStages(n int, s []colocationStage) []colocationStage {
	var out []colocationStage
	for i := 0; i < n; i++ {
		out = append(out, s...)
	}
	return out
}

// ColocationNode is the paper's node: a quad-core Xeon, 16 GB, a RAID0 of
// three HDDs (about 300 MB/s) and 1 GbE (125 MB/s).
func ColocationNode(id string) sim.Node {
	return sim.Node{ID: id, Total: resources.MustParse("cpus:4;mem:16384;disk_bw:300;net_bw:125").Scalars}
}

// ColocationProfiles is the interference model with the four types'
// profiles.
func ColocationProfiles() *sim.Interference {
	m := &sim.Interference{Profiles: map[string]sim.Profile{}}
	for typ, stages := range colocationStages {
		var p sim.Profile
		for _, s := range stages {
			p.Phases = append(p.Phases, s.phase)
		}
		m.Profiles[typ] = p
	}
	return m
}

// ColocationJob is a job of type typ running containers tasks (of 1 core,
// 1.5 GB) per stage, submitted at submit.
func ColocationJob(id, typ string, containers int, submit float64) sim.Job {
	j := sim.Job{ID: id, Framework: id, Type: typ, Submit: submit}
	for _, s := range colocationStages[typ] {
		j.Stages = append(j.Stages, sim.Stage{Groups: []sim.Group{{Tasks: containers, Duration: s.work,
			Demand: resources.MustParse("cpus:1;mem:1536").Scalars}}})
	}
	return j
}

// CalibrationRow is one job of one pairwise co-location: its change in
// duration co-located against separated, in the simulator and in the
// paper (Table 2-3's "Individually", the mean over the paper's runs of
// that pair; Fig. 4 for CC's two partners).
type CalibrationRow struct {
	Pair  string  `json:"pair"`
	Job   string  `json:"job"`
	Ratio float64 `json:"ratio"`
	Paper float64 `json:"paper"`
}

// calibrationPairs are the paper's pairwise measurements the model is set
// against. KM with KM is not here: the paper's pair is K-Means with two
// different configurations (K-Means500 and K-Means1000), which one KM type
// cannot express.
var calibrationPairs = []struct {
	a, b           string
	paperA, paperB float64
}{
	{"KM", "Q10", -0.105, -0.33}, // Table 3: KM -5 %, -16 %; TPC-H -29 %, -37 %
	{"Q10", "Q10", -0.02, -0.02}, // Table 2: -3 %, -1 %
	{"KM", "CC", -0.125, -0.085}, // Table 2: KM1000 -12 %, -13 %; CC3 -5 %, -12 %
}

// Calibrate runs each pair of the paper's co-location experiments on one
// node of the model: separated, a job's four containers alone on the
// node; co-located, two containers of each job side by side (the paper's
// placements keep every job's container count, so per node this is the
// same work). A row's Ratio is co-located over separated duration minus
// one. The last row is Fig. 4: CC's duration beside KM over beside Q10,
// minus one (the paper: CC finishes 15 % faster with KM).
func Calibrate(m *sim.Interference) ([]CalibrationRow, error) {
	var rows []CalibrationRow
	for _, p := range calibrationPairs {
		sepA, err := pairDurations(m, p.a, "", 4)
		if err != nil {
			return nil, err
		}
		sepB, err := pairDurations(m, p.b, "", 4)
		if err != nil {
			return nil, err
		}
		col, err := pairDurations(m, p.a, p.b, 2)
		if err != nil {
			return nil, err
		}
		pair := p.a + "+" + p.b
		rows = append(rows, CalibrationRow{pair, p.a, col[0]/sepA[0] - 1, p.paperA})
		if p.a != p.b {
			rows = append(rows, CalibrationRow{pair, p.b, col[1]/sepB[0] - 1, p.paperB})
		}
	}
	withKM, err := pairDurations(m, "CC", "KM", 2)
	if err != nil {
		return nil, err
	}
	withQ10, err := pairDurations(m, "CC", "Q10", 2)
	if err != nil {
		return nil, err
	}
	rows = append(rows, CalibrationRow{"CC+KM vs CC+Q10", "CC", withKM[0]/withQ10[0] - 1, -0.15})
	return rows, nil
}

// pairDurations runs job a (and b, if not "") with containers tasks per
// stage each on one node and returns their durations.
func pairDurations(m *sim.Interference, a, b string, containers int) ([]float64, error) {
	w := &sim.Workload{Name: "calibration", Nodes: []sim.Node{ColocationNode("n1")},
		Jobs: []sim.Job{ColocationJob("a", a, containers, 0)}}
	if b != "" {
		w.Jobs = append(w.Jobs, ColocationJob("b", b, containers, 0))
	}
	end := map[string]float64{}
	obs := sim.ObserverFunc(func(ev sim.Event) {
		if ev.Kind == sim.EventFinish && ev.Time > end[ev.Job] {
			end[ev.Job] = ev.Time
		}
	})
	pol, err := sim.ParsePolicy("fifo", sorter.RRR)
	if err != nil {
		return nil, err
	}
	if _, err := sim.Run(w, sim.Config{Policy: pol, Mode: allocator.Characterized, Interference: m, Observer: obs}); err != nil {
		return nil, fmt.Errorf("calibrate %s+%s: %w", a, b, err)
	}
	return []float64{end["a"], end["b"]}, nil
}

// ColocationQueue is the paper's queue: (m Q10, m KM, m Q3, m CC) repeated
// n times, every job submitted at time 0 in that order, each running
// containers tasks per stage (a quarter of the paper's 16 nodes' 64
// containers is 16). Queue A is m = 4, n = 3; queue B m = 3, n = 4.
func ColocationQueue(m, n, containers int) []sim.Job {
	var jobs []sim.Job
	for r := 0; r < n; r++ {
		for _, typ := range []string{"Q10", "KM", "Q3", "CC"} {
			for i := 0; i < m; i++ {
				jobs = append(jobs, ColocationJob(fmt.Sprintf("%s-%d", typ, len(jobs)), typ, containers, 0))
			}
		}
	}
	return jobs
}

// ColocationCluster is the paper's evaluation cluster of nodes nodes.
func ColocationCluster(nodes int) []sim.Node {
	out := make([]sim.Node, nodes)
	for i := range out {
		out[i] = ColocationNode(fmt.Sprintf("node-%02d", i))
	}
	return out
}
