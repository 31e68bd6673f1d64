package fspy

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strings"
	"testing"
)

// swimTrace2009 is the first 400 jobs of SWIM's FB-2009 sample, kept
// with the simulator's other fixtures.
const swimTrace2009 = "../../sim/trace/testdata/fb2009_head400.tsv"

// TestRunFSPY: the experiment on FB-2009's first 400 jobs (two windows)
// reports every window under every policy, groups that cover them,
// fspy's fair slowdown over all their jobs, an R^2 and the JSON fields
// the issue names; a second run repeats it exactly.
func TestRunFSPY(t *testing.T) {
	opt := FSPYOptions{Trace: "FB-2009", Path: swimTrace2009, Policies: []string{"fair", "fspy", "fsp"}}
	rep, err := RunFSPY(opt)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Windows); n != 2*3 {
		t.Fatalf("%d window runs, want 2 windows x 3 policies", n)
	}
	covered := 0
	for _, g := range rep.Groups {
		covered += g.Windows
		if g.MeanRT["fair"] <= 0 || g.FSPYOverFair <= 0 {
			t.Fatalf("group %+v lacks fair's or fspy's response time", g)
		}
	}
	if covered != 2 || rep.FairSlowdown.Jobs != 400 {
		t.Fatalf("groups cover %d windows and the fair slowdown %d jobs; want 2 and 400", covered, rep.FairSlowdown.Jobs)
	}
	if rep.Predictions == 0 || math.IsNaN(rep.R2) || rep.CommonSlowdown["fspy"].Jobs == 0 {
		t.Fatalf("predictions %d, R^2 %v, common slowdown %v", rep.Predictions, rep.R2, rep.CommonSlowdown)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"windows":[{"id":`, `"load":`, `"policy":`, `"mean_rt_s":`, `"p50_rt_s":`, `"groups":[{`, `"fspy_over_fair":`, `"fair_slowdown":{`, `"le_1":`, `"le_1_5":`, `"max":`, `"r2":`} {
		if !bytes.Contains(b, []byte(f)) {
			t.Errorf("JSON lacks %s", f)
		}
	}
	// the issue's shape and the calibration: these keys and no others
	ib, err := json.Marshal(rep.IssueJSON())
	if err != nil {
		t.Fatal(err)
	}
	var issue map[string]any
	if err := json.Unmarshal(ib, &issue); err != nil {
		t.Fatal(err)
	}
	keys := func(m any) string {
		var ks []string
		for k := range m.(map[string]any) {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return strings.Join(ks, ",")
	}
	for _, c := range []struct{ what, got, want string }{
		{"top", keys(issue), "calibrated,calibration,fair_slowdown,groups,r2,windows"},
		{"window", keys(issue["windows"].([]any)[0]), "id,load,mean_rt_s,p50_rt_s,policy"},
		{"group", keys(issue["groups"].([]any)[0]), "fspy_over_fair,load"},
		{"fair_slowdown", keys(issue["fair_slowdown"]), "le_1,le_1_5,max"},
	} {
		if c.got != c.want {
			t.Errorf("issue JSON %s keys %s, want %s", c.what, c.got, c.want)
		}
	}
	again, err := RunFSPY(opt)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(again)
	if !bytes.Equal(b, b2) {
		t.Fatal("two runs of the experiment differ")
	}
	var tab strings.Builder
	if err := WriteFSPYTable(&tab, rep, opt.Policies); err != nil || !strings.Contains(tab.String(), "0.970") {
		t.Fatalf("table %q (%v) does not set R^2 beside the paper's", tab.String(), err)
	}
}
