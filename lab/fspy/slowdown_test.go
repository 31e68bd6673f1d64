package fspy_test

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/allot-sched/allot/lab/fspy"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
)

// oneTask is a job of one task of dur seconds asking 1 cpu and memMB.
func oneTask(id string, submit, dur, memMB float64) sim.Job {
	return sim.Job{ID: id, Framework: id, Submit: submit, Stages: []sim.Stage{{Groups: []sim.Group{
		{Tasks: 1, Duration: dur, Demand: sim.Shape(1, memMB)}}}}}
}

func mustCluster(t *testing.T, spec string) []sim.Node {
	t.Helper()
	n, err := trace.ParseCluster(spec)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestECDF(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want []fspy.ECDFPoint
	}{
		{"empty", nil, nil},
		{"ties collapse to the last", []float64{3, 1, 3, 2}, []fspy.ECDFPoint{{X: 1, Y: 0.25}, {X: 2, Y: 0.5}, {X: 3, Y: 1}}},
		{"NaN left out", []float64{math.NaN(), 5}, []fspy.ECDFPoint{{X: 5, Y: 1}}},
	} {
		if got := fspy.ECDF(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: ECDF = %v, want %v", tc.name, got, tc.want)
		}
	}
	if f := fspy.FractionAtMost([]float64{0.5, 1, 1.2, 3}, 1); f != 0.5 {
		t.Errorf("FractionAtMost = %v, want 0.5", f)
	}
}

func TestFairSlowdownsPairByID(t *testing.T) {
	fair := []sim.JobStat{{ID: "a", Arrive: 0, Finish: 10}, {ID: "b", Arrive: 5, Finish: 25}, {ID: "c", Arrive: 6, Finish: 8}}
	// the same jobs in another order, as another policy's run lists them
	underFSPY := []sim.JobStat{{ID: "c", Arrive: 6, Finish: 9}, {ID: "a", Arrive: 0, Finish: 5}, {ID: "b", Arrive: 5, Finish: 25}}
	got, err := fspy.FairSlowdowns(underFSPY, fair)
	if err != nil {
		t.Fatal(err)
	}
	want := []fspy.JobRatio{{ID: "c", Value: 1.5}, {ID: "a", Value: 0.5}, {ID: "b", Value: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FairSlowdowns = %v, want %v", got, want)
	}
	s := fspy.Summarize(got)
	if s.Jobs != 3 || s.LE1 != 2.0/3 || s.LE1p5 != 1 || s.Max != 1.5 || s.Mean != 1 || s.Below4 != 1 {
		t.Errorf("Summarize = %+v", s)
	}
	if mean := fspy.MeanResponse(underFSPY); mean != 28.0/3 { // (3 + 5 + 20) / 3
		t.Errorf("MeanResponse = %v, want 28/3", mean)
	}
	for _, tc := range []struct {
		name   string
		policy []sim.JobStat
		errHas string
	}{
		{"fewer jobs", underFSPY[:2], "2 jobs against 3"},
		{"another job", []sim.JobStat{{ID: "a"}, {ID: "b"}, {ID: "z"}}, `"z" did not run under fair`},
	} {
		if _, err := fspy.FairSlowdowns(tc.policy, fair); err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.errHas)
		}
	}
}

func TestCommonSlowdownAgainstAloneRuns(t *testing.T) {
	// one node with room for one task at a time: b waits for a
	w := &sim.Workload{Name: "two", Nodes: mustCluster(t, "1xcpus=1,mem=2G"), Jobs: []sim.Job{
		oneTask("a", 0, 10, 1024), oneTask("b", 0, 10, 1024)}}
	alone, err := fspy.AloneTimes(w, sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if alone["a"] != 10 || alone["b"] != 10 {
		t.Fatalf("alone times %v, want 10 s each", alone)
	}
	r, err := sim.Run(w, sim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := fspy.CommonSlowdowns(r.JobStats, alone)
	if err != nil {
		t.Fatal(err)
	}
	v := fspy.Values(cs)
	// one runs at once (slowdown 1), the other waits for it: 20 s over 10 s
	if math.Min(v[0], v[1]) != 1 || math.Max(v[0], v[1]) != 2 {
		t.Errorf("common slowdowns %v, want 1 and 2", cs)
	}
	if _, err := fspy.CommonSlowdowns(r.JobStats, map[string]float64{"a": 10}); err == nil {
		t.Error("a job without an alone time passed")
	}
}

func TestWindows(t *testing.T) {
	nodes := mustCluster(t, "1xcpus=4,mem=2G")
	var jobs []sim.Job
	for i := range 500 {
		j := oneTask("j"+strings.Repeat("x", i%3)+string(rune('A'+i%26))+strconv.Itoa(i), float64(10*i), 10, 1024)
		jobs = append(jobs, j)
	}
	jobs[160].After = jobs[140].ID // outside window 1 (jobs 150..349)
	jobs[170].After = jobs[160].ID // inside it
	ws, err := fspy.Windows(jobs, nodes, fspy.SWIMWindowJobs, fspy.SWIMWindowOverlap)
	if err != nil {
		t.Fatal(err)
	}
	// starts 0, 150, 300 (300 + 200 = 500 jobs exactly); 450 would be short
	if len(ws) != 3 || ws[1].First != 150 || ws[2].First != 300 || len(ws[2].Jobs) != 200 || ws[2].ID != 2 {
		t.Fatalf("windows: %d, firsts %v", len(ws), []int{ws[0].First, ws[1].First})
	}
	if ws[1].Jobs[10].After != "" || ws[1].Jobs[20].After != jobs[160].ID || ws[0].Jobs[160].After != jobs[140].ID {
		t.Error("After links: want the one reaching outside the window dropped, the others kept")
	}
	if jobs[160].After == "" {
		t.Error("Windows changed the caller's jobs")
	}
	// one 10 s, 1 GB job every 10 s on 2 GB: half the memory-time
	if math.Abs(ws[0].Load-0.5) > 1e-12 {
		t.Errorf("load %v, want 0.5", ws[0].Load)
	}
	for _, bad := range [][2]int{{1, 0}, {200, 200}, {200, -1}} {
		if _, err := fspy.Windows(jobs, nodes, bad[0], bad[1]); err == nil {
			t.Errorf("Windows(%d, %d) accepted", bad[0], bad[1])
		}
	}
}

func TestOfferedLoad(t *testing.T) {
	nodes := mustCluster(t, "1xcpus=4,mem=2048")
	// 3 jobs, 10 s apart, each 10 s x 1024 MB; a two-stage job counts both
	two := oneTask("c", 20, 10, 1024)
	two.Stages = append(two.Stages, sim.Stage{Groups: []sim.Group{{Tasks: 2, Duration: 5, Demand: sim.Shape(1, 512)}}})
	jobs := []sim.Job{oneTask("a", 0, 10, 1024), oneTask("b", 10, 10, 1024), two}
	if s := sim.JobSize(&jobs[2]); s != 10*1024+2*5*512 {
		t.Errorf("JobSize = %v", s)
	}
	// (10240 + 10240 + 15360) / (3 x 10 s x 2048 MB)
	if got, want := fspy.OfferedLoad(jobs, nodes), 35840.0/(30*2048); math.Abs(got-want) > 1e-12 {
		t.Errorf("OfferedLoad = %v, want %v", got, want)
	}
	if l := fspy.OfferedLoad([]sim.Job{oneTask("a", 3, 1, 1), oneTask("b", 3, 1, 1)}, nodes); !math.IsInf(l, 1) {
		t.Errorf("simultaneous arrivals: load %v, want +Inf", l)
	}
}

func TestGroupByLoad(t *testing.T) {
	var ws []fspy.Window
	for i, l := range []float64{1.9, 0.3, 5, math.Inf(1), 1.0, 0, 0.4} {
		ws = append(ws, fspy.Window{ID: i, Load: l})
	}
	got := fspy.GroupByLoad(ws)
	want := []fspy.LoadGroup{
		{Level: -2, Lo: 0.25, Hi: 0.5, Mean: 0.35, Windows: []int{1, 6}},
		{Level: 0, Lo: 1, Hi: 2, Mean: 1.45, Windows: []int{0, 4}},
		{Level: 2, Lo: 4, Hi: 8, Mean: 5, Windows: []int{2}},
	}
	if len(got) != len(want) {
		t.Fatalf("groups %+v", got)
	}
	for i := range want {
		g := got[i]
		if g.Level != want[i].Level || g.Lo != want[i].Lo || g.Hi != want[i].Hi || math.Abs(g.Mean-want[i].Mean) > 1e-12 || !reflect.DeepEqual(g.Windows, want[i].Windows) {
			t.Errorf("group %d = %+v, want %+v", i, g, want[i])
		}
	}
}

func TestPredictionR2PairsByID(t *testing.T) {
	actual := map[string]float64{"a": 1, "b": 2, "c": 3, "d": 4, "never": 100}
	if r2 := sim.PredictionR2(actual, map[string]float64{"d": 4, "a": 1, "c": 3, "b": 2}); r2 != 1 {
		t.Errorf("perfect predictions: R^2 %v", r2)
	}
	// SS_res = 1, SS_tot = 5 over a..d; "never" was never predicted, "x" never ran
	if r2 := sim.PredictionR2(actual, map[string]float64{"a": 1.5, "b": 2.5, "c": 2.5, "d": 4.5, "x": 9}); math.Abs(r2-0.8) > 1e-12 {
		t.Errorf("R^2 %v, want 0.8", r2)
	}
	if r2 := sim.PredictionR2(actual, nil); !math.IsNaN(r2) {
		t.Errorf("no predictions: R^2 %v, want NaN", r2)
	}
}
