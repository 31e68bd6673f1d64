package sorter

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func close9(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestGoodness(t *testing.T) {
	t2 := math.Tanh(2)
	tests := []struct {
		name string
		u    NodeUsage
		want float64
	}{
		{"idle node", NodeUsage{DiskBW: 100, NetBW: 100}, math.E},
		{"cpu saturated, no I/O", NodeUsage{CPU: 1, DiskBW: 100, NetBW: 100}, math.Exp(2)},
		// r/r_max + w/w_max = 1 + 1 on the disk; the network idle.
		{"disk saturated both ways", NodeUsage{DiskReadMBps: 100, DiskWriteMBps: 100, DiskBW: 100, NetBW: 125}, math.Exp(1 + t2)},
		{"everything saturated, no wait", NodeUsage{CPU: 1, DiskReadMBps: 100, DiskWriteMBps: 100, NetRxMBps: 125, NetTxMBps: 125,
			DiskBW: 100, NetBW: 125}, math.Exp(2 + 2*t2)},
		// l(1) = e^-5 all but cancels the I/O reward.
		{"everything saturated, all wait", NodeUsage{CPU: 1, IOWait: 1, DiskReadMBps: 100, DiskWriteMBps: 100, NetRxMBps: 125,
			NetTxMBps: 125, DiskBW: 100, NetBW: 125}, math.Exp(2 + 2*t2*math.Exp(-5))},
		// Half the disk read, a fifth of the net sent, 10 % wait.
		{"mixed", NodeUsage{CPU: 0.6, IOWait: 0.1, DiskReadMBps: 50, NetTxMBps: 25, DiskBW: 100, NetBW: 125},
			math.Exp(1 + 0.6 + (math.Tanh(0.5)+math.Tanh(0.2))*math.Exp(-0.5))},
		{"no bandwidth advertised", NodeUsage{CPU: 0.5, DiskReadMBps: 500, NetRxMBps: 500}, math.Exp(1.5)},
	}
	for _, tc := range tests {
		if got := Goodness(tc.u); !close9(got, tc.want) {
			t.Errorf("%s: G = %.12g, want %.12g", tc.name, got, tc.want)
		}
	}
	// I/O wait only ever lowers G when there is I/O to weigh down.
	busy := NodeUsage{CPU: 0.5, DiskReadMBps: 80, DiskBW: 100, NetBW: 100}
	waiting := busy
	waiting.IOWait = 0.3
	if !(Goodness(waiting) < Goodness(busy)) {
		t.Error("I/O wait did not lower goodness")
	}
}

func TestSoftmax(t *testing.T) {
	tests := []struct {
		name string
		h    []float64
		want []float64
	}{
		{"empty", nil, []float64{}},
		{"uniform start", []float64{0, 0, 0, 0}, []float64{0.25, 0.25, 0.25, 0.25}},
		{"logs of 1, 2, 3", []float64{0, math.Log(2), math.Log(3)}, []float64{1.0 / 6, 2.0 / 6, 3.0 / 6}},
		{"shift invariant", []float64{5, 5 + math.Log(3)}, []float64{0.25, 0.75}},
		{"no overflow", []float64{1000, 1000}, []float64{0.5, 0.5}},
		{"no underflow to nothing", []float64{-1000, -1000 + math.Log(4)}, []float64{0.2, 0.8}},
	}
	for _, tc := range tests {
		got := Softmax(tc.h)
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, got, tc.want)
		}
		for i := range got {
			if !close9(got[i], tc.want[i]) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
}

func TestDraw(t *testing.T) {
	probs := []float64{0.2, 0, 0.5, 0.3}
	tests := []struct {
		u    float64
		want int
	}{
		{0, 0}, {0.1999, 0}, {0.2, 2}, {0.6999, 2}, {0.7, 3}, {0.99999, 3},
		{1, 3}, // past a sum rounded below 1: the last index with mass
	}
	for _, tc := range tests {
		if got := Draw(probs, tc.u); got != tc.want {
			t.Errorf("Draw(%v, %g) = %d, want %d", probs, tc.u, got, tc.want)
		}
	}
	if got := Draw([]float64{0, 0}, 0.5); got != -1 {
		t.Errorf("Draw with no mass = %d, want -1", got)
	}
}

func TestPolicyWindowAndResidents(t *testing.T) {
	p := NewPreferences(0.1, BaselinePerRow)
	p.Restore(mustSnapshot(t, []string{"KM", "CC", "Q10"}, [][]float64{
		// rows: running KM, CC, Q10; columns: queued KM, CC, Q10
		{0, math.Log(3), 0},
		{0, 0, math.Log(2)},
		{math.Log(2), 0, -50},
	}))
	tests := []struct {
		name      string
		residents []string
		window    []string
		types     []string
		probs     []float64
	}{
		{"empty node is uniform", nil, []string{"Q10", "KM"}, []string{"Q10", "KM"}, []float64{0.5, 0.5}},
		// Types, not jobs: four Q10 jobs queued are one candidate.
		{"window types, first appearance", []string{"KM"}, []string{"Q10", "Q10", "CC", "Q10", "KM"},
			[]string{"Q10", "CC", "KM"}, []float64{0.2, 0.6, 0.2}},
		// Pooled rows KM + CC: KM 0, CC ln3, Q10 ln2 -> 1:3:2.
		{"two residents pool", []string{"KM", "CC", "KM"}, []string{"KM", "CC", "Q10"},
			[]string{"KM", "CC", "Q10"}, []float64{1.0 / 6, 3.0 / 6, 2.0 / 6}},
		{"unknown types are neutral", []string{"new"}, []string{"KM", "other"}, []string{"KM", "other"}, []float64{0.5, 0.5}},
	}
	for _, tc := range tests {
		types, probs := p.Policy(tc.residents, tc.window)
		if len(types) != len(tc.types) {
			t.Fatalf("%s: types %v, want %v", tc.name, types, tc.types)
		}
		for i := range types {
			if types[i] != tc.types[i] || !close9(probs[i], tc.probs[i]) {
				t.Errorf("%s: %v %v, want %v %v", tc.name, types, probs, tc.types, tc.probs)
				break
			}
		}
	}
	// Choose maps u through the same cumulative order.
	if got := p.Choose([]string{"KM"}, []string{"Q10", "CC", "KM"}, 0.5); got != "CC" {
		t.Errorf("Choose(u=0.5) = %q, want CC", got)
	}
	if got := p.Choose([]string{"KM"}, nil, 0.5); got != "" {
		t.Errorf("Choose on an empty window = %q", got)
	}
}

func TestUpdateByHand(t *testing.T) {
	p := NewPreferences(0.1, BaselinePerRow)
	window := []string{"A", "B"}
	// First G of a row equals its own mean: nothing moves (the paper's
	// G-bar includes G_t).
	p.Update([]string{"R"}, window, "A", 5)
	if p.H("R", "A") != 0 || p.H("R", "B") != 0 || p.Baseline("R") != 5 {
		t.Fatalf("after first update H = %g, %g, baseline %g; want 0, 0, 5", p.H("R", "A"), p.H("R", "B"), p.Baseline("R"))
	}
	// G = 7: G-bar = 6, pi = (1/2, 1/2): A += 0.1*1*(1-1/2), B -= 0.1*1*1/2.
	p.Update([]string{"R"}, window, "A", 7)
	if !close9(p.H("R", "A"), 0.05) || !close9(p.H("R", "B"), -0.05) {
		t.Fatalf("after second update H = %g, %g; want 0.05, -0.05", p.H("R", "A"), p.H("R", "B"))
	}
	// G = 3 choosing B: G-bar = 5, so g - Gbar = -2; pi(B) = 1/(1+e^0.1).
	piB := 1 / (1 + math.Exp(0.1))
	wantA := 0.05 - 0.1*(-2)*(1-piB)
	wantB := -0.05 + 0.1*(-2)*(1-piB)
	p.Update([]string{"R"}, window, "B", 3)
	if !close9(p.H("R", "A"), wantA) || !close9(p.H("R", "B"), wantB) {
		t.Fatalf("after third update H = %g, %g; want %g, %g", p.H("R", "A"), p.H("R", "B"), wantA, wantB)
	}
	// Preferences of a row always sum to what they started with: the
	// update moves mass between arms (sum of (1[a] - pi) is 0).
	if s := p.H("R", "A") + p.H("R", "B"); math.Abs(s) > 1e-12 {
		t.Errorf("row sum = %g, want 0", s)
	}
	// Other rows and the reverse direction are untouched.
	if p.H("A", "R") != 0 || p.H("A", "A") != 0 {
		t.Error("update leaked into another row")
	}
}

func TestUpdateWindowVersusAllTypes(t *testing.T) {
	seed := func() *Preferences {
		p := NewPreferences(1, BaselinePerRow)
		p.Update([]string{"R"}, []string{"A", "B", "C"}, "A", 0) // learn the three types, baseline 0
		return p
	}
	// Window {A, B}: C was no candidate and keeps its preference.
	w := seed()
	w.Update([]string{"R"}, []string{"A", "B"}, "A", 2) // Gbar 1, pi 1/2
	if !close9(w.H("R", "A"), 0.5) || !close9(w.H("R", "B"), -0.5) || w.H("R", "C") != 0 {
		t.Errorf("window update: %g %g %g, want 0.5 -0.5 0", w.H("R", "A"), w.H("R", "B"), w.H("R", "C"))
	}
	// nil window: the paper's pi over all known types, R itself included
	// (a type seen running can be queued too): 1/4 each.
	a := seed()
	a.Update([]string{"R"}, nil, "A", 2)
	if !close9(a.H("R", "A"), 0.75) || !close9(a.H("R", "B"), -0.25) || !close9(a.H("R", "C"), -0.25) || !close9(a.H("R", "R"), -0.25) {
		t.Errorf("all-types update: %g %g %g %g, want 0.75 -0.25 -0.25 -0.25",
			a.H("R", "A"), a.H("R", "B"), a.H("R", "C"), a.H("R", "R"))
	}
}

func TestUpdateResidents(t *testing.T) {
	// Two resident types: both rows move by the pooled pi, each against its
	// own baseline.
	p := NewPreferences(1, BaselinePerRow)
	p.Update([]string{"X"}, []string{"A", "B"}, "A", 4) // X's mean 4
	p.Update([]string{"Y"}, []string{"A", "B"}, "A", 0) // Y's mean 0
	p.Update([]string{"X", "Y", "Y"}, []string{"A", "B"}, "B", 2)
	// X: mean (4+2)/2 = 3, g - Gbar = -1; Y: mean 1, g - Gbar = +1; pooled
	// logits are 0 for both arms, so pi = 1/2.
	want := map[[2]string]float64{{"X", "A"}: 0.5, {"X", "B"}: -0.5, {"Y", "A"}: -0.5, {"Y", "B"}: 0.5}
	for k, v := range want {
		if got := p.H(k[0], k[1]); !close9(got, v) {
			t.Errorf("H(%s | %s) = %g, want %g", k[1], k[0], got, v)
		}
	}
	// No residents: no co-location, nothing learned, baselines unchanged.
	before, _ := p.Snapshot()
	p.Update(nil, []string{"A"}, "A", 40)
	if after, _ := p.Snapshot(); !bytes.Equal(before, after) {
		t.Error("update without residents changed the state")
	}
}

func TestBaselineScope(t *testing.T) {
	run := func(scope BaselineScope) float64 {
		p := NewPreferences(0.1, scope)
		p.Update([]string{"R1"}, []string{"A", "B"}, "A", 10)
		p.Update([]string{"R2"}, []string{"A", "B"}, "A", 2)
		return p.H("R2", "A")
	}
	// Per row: R2's first G is its own mean, no move. Global: mean 6, so
	// 2 - 6 = -4 pushes A down by 0.1*4*1/2 although R2 never saw better.
	if got := run(BaselinePerRow); got != 0 {
		t.Errorf("per-row baseline: H = %g, want 0", got)
	}
	if got := run(BaselineGlobal); !close9(got, -0.2) {
		t.Errorf("global baseline: H = %g, want -0.2", got)
	}
}

func TestZeroValueUsable(t *testing.T) {
	var p Preferences
	p.Step = 1
	p.Update([]string{"R"}, []string{"A", "B"}, "A", 1)
	p.Update([]string{"R"}, []string{"A", "B"}, "A", 3) // Gbar 2: A +0.5
	if !close9(p.H("R", "A"), 0.5) {
		t.Errorf("H = %g, want 0.5", p.H("R", "A"))
	}
}

func TestStepZeroFreezes(t *testing.T) {
	p := NewPreferences(0, BaselinePerRow)
	for i := 0; i < 10; i++ {
		p.Update([]string{"R"}, []string{"A", "B"}, "A", float64(i))
	}
	if p.H("R", "A") != 0 || p.H("R", "B") != 0 {
		t.Error("step 0 moved preferences")
	}
}

// TestConvergesToBetterArm: a stationary two-armed problem, the better
// arm's goodness N(6, 1) and the other's N(4, 1), the better arm first or
// second in the window by seed. Drawing by the policy and updating, its
// probability must end near 1 for every seed and both baselines.
func TestConvergesToBetterArm(t *testing.T) {
	window := []string{"A", "B"}
	for _, scope := range []BaselineScope{BaselinePerRow, BaselineGlobal} {
		for seed := uint64(1); seed <= 5; seed++ {
			rng := rand.New(rand.NewPCG(seed, 13))
			p := NewPreferences(DefaultBanditStep, scope)
			good := int(seed % 2)
			pulls := map[string]int{}
			for i := 0; i < 2000; i++ {
				a := p.Choose([]string{"R"}, window, rng.Float64())
				pulls[a]++
				g := 4 + rng.NormFloat64()
				if a == window[good] {
					g += 2
				}
				p.Update([]string{"R"}, window, a, g)
			}
			_, probs := p.Policy([]string{"R"}, window)
			if probs[good] < 0.95 || pulls[window[good]] < 1500 {
				t.Errorf("scope %d seed %d: pi(%s) = %.3f after %v pulls", scope, seed, window[good], probs[good], pulls)
			}
		}
	}
}

func mustSnapshot(t *testing.T, types []string, h [][]float64) []byte {
	t.Helper()
	p := NewPreferences(0, BaselinePerRow)
	for _, x := range types {
		p.ensure(x)
	}
	for i := range h {
		copy(p.h[i], h[i])
	}
	b, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSnapshotRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	p := NewPreferences(0.3, BaselinePerRow)
	types := []string{"KM", "CC", "Q10", "Q3"}
	for i := 0; i < 200; i++ {
		r := types[rng.IntN(4)]
		p.Update([]string{r}, types, p.Choose([]string{r}, types, rng.Float64()), 3+10*rng.Float64())
	}
	b, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q := NewPreferences(0.3, BaselinePerRow)
	if err := q.Restore(b); err != nil {
		t.Fatal(err)
	}
	b2, _ := q.Snapshot()
	if !bytes.Equal(b, b2) {
		t.Fatalf("snapshot changed in a round trip:\n%s\n%s", b, b2)
	}
	// The restored copy decides and learns exactly as the original.
	for i := 0; i < 50; i++ {
		u, g := rng.Float64(), 10*rng.Float64()
		a, c := p.Choose([]string{"Q10"}, types, u), q.Choose([]string{"Q10"}, types, u)
		if a != c {
			t.Fatalf("step %d: original chose %s, restored %s", i, a, c)
		}
		p.Update([]string{"Q10"}, types, a, g)
		q.Update([]string{"Q10"}, types, c, g)
	}
	for _, r := range types {
		for _, c := range types {
			if p.H(r, c) != q.H(r, c) {
				t.Fatalf("H(%s | %s): %g vs %g", c, r, p.H(r, c), q.H(r, c))
			}
		}
	}
}

func TestRestoreRejects(t *testing.T) {
	good := mustSnapshot(t, []string{"A"}, [][]float64{{1}})
	bad := map[string]string{
		"not json":      "{",
		"version":       `{"version":2,"types":[],"h":[],"row_n":[],"row_mean":[]}`,
		"ragged":        `{"version":1,"types":["A","B"],"h":[[0,0],[0]],"row_n":[0,0],"row_mean":[0,0]}`,
		"missing rows":  `{"version":1,"types":["A","B"],"h":[[0,0]],"row_n":[0,0],"row_mean":[0,0]}`,
		"duplicate":     `{"version":1,"types":["A","A"],"h":[[0,0],[0,0]],"row_n":[0,0],"row_mean":[0,0]}`,
		"missing means": `{"version":1,"types":["A"],"h":[[0]],"row_n":[0],"row_mean":[]}`,
	}
	for name, s := range bad {
		p := NewPreferences(0.1, BaselinePerRow)
		if err := p.Restore(good); err != nil {
			t.Fatal(err)
		}
		if err := p.Restore([]byte(s)); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if p.H("A", "A") != 1 {
			t.Errorf("%s: failed restore changed the state", name)
		}
	}
}
