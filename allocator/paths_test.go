package allocator

import (
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/allot-sched/allot/sorter"
)

// describePath names the path New chose, with the pick functions the rrr
// paths were given: "characterized(tasks, whole agents)" or a whole-agent
// path alone.
func describePath(f filler) string {
	switch p := f.(type) {
	case characterized:
		return fmt.Sprintf("characterized(%s, %s)", describePath(p.tasks), describePath(p.wholeAgents))
	case *coarseRRR:
		return "coarseRRR/" + funcName(p.pick)
	case *progRRR:
		return "progRRR/" + funcName(p.pick)
	}
	return strings.TrimPrefix(strings.TrimPrefix(fmt.Sprintf("%T", f), "*"), "allocator.")
}

// funcName is the method a pick function value was bound to ("scan").
func funcName(fn any) string {
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	return strings.TrimSuffix(name[strings.LastIndex(name, ".")+1:], "-fm")
}

// TestChoosePath pins the one decision table: which fill path each
// (criterion, selection, mode) runs, including the brute-force oracle.
func TestChoosePath(t *testing.T) {
	cases := []struct {
		crit  string
		sel   sorter.AgentSelection
		mode  Mode
		brute bool
		want  string
	}{
		{"drf", sorter.RRR, Oblivious, false, "coarseRRR/firstInOrder"},
		{"psdsf", sorter.RRR, Oblivious, false, "coarseRRR/firstInClass"},
		{"psdsf", sorter.RRR, Oblivious, true, "coarseRRR/scan"},
		{"rpsdsf", sorter.RRR, Oblivious, false, "coarseRRR/scan"},
		{"tetris", sorter.RRR, Oblivious, false, "coarseRRR/scan"},
		{"random", sorter.RRR, Oblivious, false, "coarseRRR/draw"},
		{"tsf", sorter.BestFit, Oblivious, false, "coarseBestFit"},
		{"psdsf", sorter.Joint, Oblivious, false, "coarseJoint"},
		{"drf", sorter.RRR, Characterized, false, "characterized(progRRR/firstOnAgent, coarseRRR/firstInOrder)"},
		{"psdsf", sorter.RRR, Characterized, false, "characterized(progRRR/firstOnAgent, coarseRRR/firstInClass)"},
		{"tetris", sorter.RRR, Characterized, false, "characterized(progRRR/scanOnAgent, coarseRRR/scan)"},
		{"random", sorter.RRR, Characterized, false, "characterized(progRRR/drawOnAgent, coarseRRR/draw)"},
		{"fifo", sorter.BestFit, Characterized, false, "characterized(progBestFit, coarseBestFit)"},
		{"drf", sorter.Joint, Characterized, false, "characterized(jointOrdered, coarseJoint)"},
		{"psdsf", sorter.Joint, Characterized, false, "characterized(jointSeparable, coarseJoint)"},
		{"rpsdsf", sorter.Joint, Characterized, true, "characterized(progBrute, coarseJoint)"},
		{"tetris", sorter.Joint, Characterized, false, "characterized(progBrute, coarseJoint)"},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/%s/%s/brute=%v", c.crit, c.sel, c.mode, c.brute)
		t.Run(name, func(t *testing.T) {
			crit, err := sorter.Lookup(c.crit)
			if err != nil {
				t.Fatal(err)
			}
			a, err := New(Config{Sorter: crit, AgentSelection: c.sel, Mode: c.mode, Clock: &ManualClock{}, bruteForce: c.brute})
			if err != nil {
				t.Fatal(err)
			}
			if got := describePath(a.path); got != c.want {
				t.Fatalf("path %s, want %s", got, c.want)
			}
		})
	}
}
