package integration

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/taskstate"
)

// chaosRecord is what the chaos framework saw.
type chaosRecord struct {
	Work         int // work items
	Launches     []*chaosLaunch
	Started      time.Time
	Finishes     []time.Time // when each work item first finished
	FinishedWork []string    // which work item, in the same order
	Strays       int         // updates for launches never made
	AcceptFailed int         // ACCEPT calls that failed (settled by reconciliation)
}

// chaosFindings is the checker's verdict: the figures, and the launch or
// work ids behind each kind of violation.
type chaosFindings struct {
	Work, Launches, Relaunches, Finished int
	// Violations.
	DoubleTerminal   []string // a launch with two different terminal states
	Unresolved       []string // a launch with no terminal state
	RanTwice         []string // a launch id in the ledger more than once
	FinishedNeverRan []string // FINISHED, but never in the ledger
	Unfinished       []string // a work item no launch finished
	// Figures that are not violations by themselves.
	LostButRan   []string // reported LOST (or another failure) yet in the ledger
	WorkRanTwice []string // work items that ran under two launches
	Redelivered  int      // the same terminal state heard again (at-least-once delivery, reconciliation)
	AfterTerm    int      // non-terminal updates heard after a launch's first terminal state
	AfterTermIDs []string // the launches that heard them
	LongestStall time.Duration
	// StallEnd is the work item whose finish ended the longest stall
	// ("" for the end of the run), with what its launches heard.
	StallEnd string
}

// readLedger counts the lines of the ledger the tasks append their launch
// id to when they start.
func readLedger(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]int{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id := strings.TrimSpace(sc.Text()); id != "" {
			out[id]++
		}
	}
	return out, sc.Err()
}

// checkChaos compares the framework's record with the ledger.
func checkChaos(r chaosRecord, ledger map[string]int, end time.Time) chaosFindings {
	f := chaosFindings{Work: r.Work, Launches: len(r.Launches)}
	finishedWork := map[string]bool{}
	ranPerWork := map[string]int{}
	launchesPerWork := map[string]int{}
	for _, l := range r.Launches {
		launchesPerWork[l.Work]++
		if ledger[l.ID] > 0 {
			ranPerWork[l.Work]++
		}
		if ledger[l.ID] > 1 {
			f.RanTwice = append(f.RanTwice, fmt.Sprintf("%s (%d times)", l.ID, ledger[l.ID]))
		}
		terms := l.terminals()
		switch {
		case len(terms) == 0:
			f.Unresolved = append(f.Unresolved, l.ID)
		case len(terms) > 1:
			f.DoubleTerminal = append(f.DoubleTerminal, fmt.Sprintf("%s: %v", l.ID, l.Reasons))
		}
		if len(terms) > 0 {
			f.checkAfterTerminal(l, terms[0])
		}
		for _, s := range terms {
			if s == mesos.TASK_FINISHED {
				finishedWork[l.Work] = true
				f.Finished++
				if ledger[l.ID] == 0 {
					f.FinishedNeverRan = append(f.FinishedNeverRan, l.ID)
				}
			}
		}
		if len(terms) > 0 && terms[0] != mesos.TASK_FINISHED && ledger[l.ID] > 0 {
			f.LostButRan = append(f.LostButRan, fmt.Sprintf("%s: %v", l.ID, l.Reasons))
		}
	}
	for w, n := range launchesPerWork {
		f.Relaunches += n - 1
		if ranPerWork[w] > 1 {
			f.WorkRanTwice = append(f.WorkRanTwice, w)
		}
	}
	for i := 0; i < r.Work; i++ {
		if w := fmt.Sprintf("w%03d", i); !finishedWork[w] {
			f.Unfinished = append(f.Unfinished, w)
		}
	}
	f.findLongestStall(r, end)
	for _, s := range [][]string{f.DoubleTerminal, f.Unresolved, f.RanTwice, f.FinishedNeverRan, f.Unfinished, f.LostButRan, f.WorkRanTwice, f.AfterTermIDs} {
		sort.Strings(s)
	}
	return f
}

// checkAfterTerminal counts what the framework saw of launch l after its
// first terminal state term: the same state again (a redelivery) or a
// non-terminal one (the task going back from its end).
func (f *chaosFindings) checkAfterTerminal(l *chaosLaunch, term mesos.TaskState) {
	first := len(l.States)
	for i, s := range l.States {
		if s == term {
			first = i
			break
		}
	}
	after := 0
	for _, s := range l.States[first+1:] {
		switch {
		case s == term:
			f.Redelivered++
		case !taskstate.IsTerminal(s):
			after++
		}
	}
	if after > 0 {
		f.AfterTerm += after
		f.AfterTermIDs = append(f.AfterTermIDs, fmt.Sprintf("%s: %v", l.ID, l.Reasons))
	}
}

// findLongestStall finds the longest time with no work finishing, from the
// start (or to end, when work is left unfinished), and the launches of the
// work whose finish ended it.
func (f *chaosFindings) findLongestStall(r chaosRecord, end time.Time) {
	type mark struct {
		at   time.Time
		work string
	}
	marks := []mark{{at: r.Started}}
	for i, at := range r.Finishes {
		m := mark{at: at}
		if i < len(r.FinishedWork) {
			m.work = r.FinishedWork[i]
		}
		marks = append(marks, m)
	}
	sort.Slice(marks, func(i, j int) bool { return marks[i].at.Before(marks[j].at) })
	if len(f.Unfinished) > 0 {
		marks = append(marks, mark{at: end}) // still stalled at the end
	}
	for i := 1; i < len(marks); i++ {
		if d := marks[i].at.Sub(marks[i-1].at); d > f.LongestStall {
			f.LongestStall, f.StallEnd = d, marks[i].work
		}
	}
	if f.StallEnd != "" {
		var hist []string
		for _, l := range r.Launches {
			if l.Work == f.StallEnd {
				hist = append(hist, fmt.Sprintf("%s %v", l.ID, l.Reasons))
			}
		}
		f.StallEnd += ": " + strings.Join(hist, "; ")
	}
}

// violations lists what breaks the rules: every launch ends in exactly
// one terminal state as the framework sees it (and none goes back from
// it), no launch runs twice, nothing is FINISHED that never ran, every
// work item finishes.
func (f chaosFindings) violations() []string {
	var out []string
	add := func(what string, ids []string) {
		if len(ids) > 0 {
			out = append(out, fmt.Sprintf("%s: %d: %s", what, len(ids), strings.Join(firstN(ids, 10), "; ")))
		}
	}
	add("launches with two terminal states", f.DoubleTerminal)
	add("launches with no terminal state", f.Unresolved)
	add("launches that ran twice", f.RanTwice)
	add("launches FINISHED that never ran", f.FinishedNeverRan)
	add("launches that went back from a terminal state", f.AfterTermIDs)
	add("work items never finished", f.Unfinished)
	return out
}

func (f chaosFindings) String() string {
	return fmt.Sprintf("work %d, launches %d (relaunches %d), FINISHED %d; two terminal states %d, no terminal state %d, ran twice %d, FINISHED never ran %d, unfinished %d; failed yet ran %d, work ran twice %d, terminal redelivered %d, non-terminal after terminal %d; longest time without progress %v",
		f.Work, f.Launches, f.Relaunches, f.Finished, len(f.DoubleTerminal), len(f.Unresolved), len(f.RanTwice), len(f.FinishedNeverRan), len(f.Unfinished),
		len(f.LostButRan), len(f.WorkRanTwice), f.Redelivered, f.AfterTerm, f.LongestStall.Round(time.Millisecond))
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("... %d more", len(s)-n))
	}
	return s
}

// The checker itself: each rule is caught from a record and a ledger.
func TestChaosChecker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	launch := func(id string, states ...mesos.TaskState) *chaosLaunch {
		l := &chaosLaunch{ID: id, Work: strings.Split(id, ".")[0], States: states}
		for _, s := range states {
			l.Reasons = append(l.Reasons, s.String())
		}
		return l
	}
	R, F, L := mesos.TASK_RUNNING, mesos.TASK_FINISHED, mesos.TASK_LOST
	cases := []struct {
		name     string
		launches []*chaosLaunch
		ledger   map[string]int
		want     []string // violation kinds, by their prefix
		lostRan  int
	}{
		{"clean", []*chaosLaunch{launch("w000.1", R, F)}, map[string]int{"w000.1": 1}, nil, 0},
		{"redelivered FINISHED is one terminal state", []*chaosLaunch{launch("w000.1", R, F, F)}, map[string]int{"w000.1": 1}, nil, 0},
		{"LOST then FINISHED", []*chaosLaunch{launch("w000.1", R, L, F)}, map[string]int{"w000.1": 1}, []string{"launches with two terminal states"}, 1},
		{"ran twice", []*chaosLaunch{launch("w000.1", R, F)}, map[string]int{"w000.1": 2}, []string{"launches that ran twice"}, 0},
		{"FINISHED never ran", []*chaosLaunch{launch("w000.1", R, F)}, map[string]int{}, []string{"launches FINISHED that never ran"}, 0},
		{"no terminal state", []*chaosLaunch{launch("w000.1", R)}, map[string]int{"w000.1": 1}, []string{"launches with no terminal state", "work items never finished"}, 0},
		{"STAGING after LOST", []*chaosLaunch{launch("w000.1", mesos.TASK_STAGING, L, mesos.TASK_STAGING), launch("w000.2", R, F)}, map[string]int{"w000.2": 1}, []string{"launches that went back from a terminal state"}, 0},
		{"relaunched after a LOST that never ran", []*chaosLaunch{launch("w000.1", L), launch("w000.2", R, F)}, map[string]int{"w000.2": 1}, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := checkChaos(chaosRecord{Work: 1, Launches: tc.launches, Started: t0, Finishes: []time.Time{t0.Add(time.Second)}}, tc.ledger, t0.Add(2*time.Second))
			v := f.violations()
			if len(v) != len(tc.want) {
				t.Fatalf("violations %q, want %q", v, tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(v[i], w) {
					t.Errorf("violation %q, want %q", v[i], w)
				}
			}
			if len(f.LostButRan) != tc.lostRan {
				t.Errorf("failed yet ran: %v, want %d", f.LostButRan, tc.lostRan)
			}
		})
	}
}
