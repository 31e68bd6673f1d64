package elastic

import (
	"reflect"
	"testing"
	"time"
)

var t0 = time.Unix(1_800_000_000, 0)

func at(d time.Duration) time.Time { return t0.Add(d) }

func idle(id string, since time.Duration) Executor {
	return Executor{ID: id, Cores: 2, IdleSince: at(since)}
}

func busy(id string, running int) Executor {
	return Executor{ID: id, Cores: 2, Running: running, IdleSince: at(0)}
}

// idleBacklogCase is one pool shown to the idle/backlog rule at now, and
// the decision expected of it.
type idleBacklogCase struct {
	name     string
	now      time.Duration
	pool     Pool
	releases []string
	add      int
	target   int
	backlog  Backlog
}

// idleBacklogCases walk the rule through backlog growth and idle release.
var idleBacklogCases = []idleBacklogCase{
	{name: "no backlog, nothing idle long enough: steady, step reset",
		now: 5 * time.Second, pool: Pool{Executors: []Executor{idle("a", 0), idle("b", 0)}, Target: 2, Backlog: Backlog{Since: at(0), Step: 4}},
		target: 2, backlog: Backlog{Step: 1}},
	{name: "backlog starts: timed from now, no addition yet",
		now: 2 * time.Second, pool: Pool{Executors: []Executor{busy("a", 2)}, Pending: 3, Target: 1},
		target: 1, backlog: Backlog{Since: at(2 * time.Second)}},
	{name: "backlog shorter than the timeout: wait",
		now: 2500 * time.Millisecond, pool: Pool{Executors: []Executor{busy("a", 2)}, Pending: 3, Target: 1, Backlog: Backlog{Since: at(2 * time.Second)}},
		target: 1, backlog: Backlog{Since: at(2 * time.Second)}},
	{name: "backlog outlasts the timeout: add one, double the step",
		now: 3 * time.Second, pool: Pool{Executors: []Executor{busy("a", 2)}, Pending: 3, Target: 1, Backlog: Backlog{Since: at(2 * time.Second), Step: 1}},
		add: 1, target: 2, backlog: Backlog{Since: at(3 * time.Second), Step: 2}},
	{name: "the zero step counts as one",
		now: 3 * time.Second, pool: Pool{Executors: []Executor{busy("a", 2)}, Pending: 3, Target: 1, Backlog: Backlog{Since: at(0)}},
		add: 1, target: 2, backlog: Backlog{Since: at(3 * time.Second), Step: 2}},
	{name: "backlog lasts: add the doubled step",
		now: 5 * time.Second, pool: Pool{Executors: []Executor{busy("a", 2), busy("b", 2)}, Pending: 9, Target: 2, Backlog: Backlog{Since: at(4 * time.Second), Step: 2}},
		add: 2, target: 4, backlog: Backlog{Since: at(5 * time.Second), Step: 4}},
	{name: "scale-up capped at Max",
		now: 9 * time.Second, pool: Pool{Executors: []Executor{busy("a", 2)}, Pending: 9, Target: 4, Backlog: Backlog{Since: at(0), Step: 8}},
		add: 2, target: 6, backlog: Backlog{Since: at(9 * time.Second), Step: 16}},
	{name: "at Max: no addition, backlog keeps its start",
		now: 9 * time.Second, pool: Pool{Executors: []Executor{busy("a", 2)}, Pending: 9, Target: 6, Backlog: Backlog{Since: at(0), Step: 8}},
		target: 6, backlog: Backlog{Since: at(0), Step: 8}},
	{name: "a free core is no backlog: reset",
		now: 9 * time.Second, pool: Pool{Executors: []Executor{busy("a", 2), busy("b", 1)}, Pending: 9, Target: 2, Backlog: Backlog{Since: at(0), Step: 8}},
		target: 2, backlog: Backlog{Step: 1}},
	{name: "idle past the timeout: released, target down",
		now: 20 * time.Second, pool: Pool{Executors: []Executor{idle("b", 0), busy("a", 1)}, Target: 2},
		releases: []string{"b"}, target: 1, backlog: Backlog{Step: 1}},
	{name: "idle just short of the timeout: kept",
		now: 9999 * time.Millisecond, pool: Pool{Executors: []Executor{idle("b", 0), busy("a", 1)}, Target: 2},
		target: 2, backlog: Backlog{Step: 1}},
	{name: "idle exactly the timeout: released",
		now: 10 * time.Second, pool: Pool{Executors: []Executor{idle("b", 0), busy("a", 1)}, Target: 2},
		releases: []string{"b"}, target: 1, backlog: Backlog{Step: 1}},
	{name: "reported cached blocks keep an idle executor",
		now: 60 * time.Second, pool: Pool{Executors: []Executor{{ID: "b", Cores: 2, IdleSince: at(0), CachedBlocks: 3}, busy("a", 1)}, Target: 2},
		target: 2, backlog: Backlog{Step: 1}},
	{name: "cached partitions the driver reads keep an idle executor",
		now: 60 * time.Second, pool: Pool{Executors: []Executor{{ID: "b", Cores: 2, IdleSince: at(0), CachedPartitions: 1}, busy("a", 1)}, Target: 2},
		target: 2, backlog: Backlog{Step: 1}},
	{name: "pending tasks: nothing released",
		now: 60 * time.Second, pool: Pool{Executors: []Executor{idle("b", 0), busy("a", 1)}, Pending: 1, Target: 2},
		target: 2, backlog: Backlog{Step: 1}},
	{name: "never below Min: the first idle ones in id order go",
		now: 60 * time.Second, pool: Pool{Executors: []Executor{idle("c", 0), idle("a", 0), idle("b", 0)}, Target: 3},
		releases: []string{"a", "b"}, target: 1, backlog: Backlog{Step: 1}},
	{name: "target floors at Min",
		now: 60 * time.Second, pool: Pool{Executors: []Executor{idle("a", 0), idle("b", 0)}, Target: 1},
		releases: []string{"a"}, target: 1, backlog: Backlog{Step: 1}},
	{name: "at Min: nothing released",
		now: 60 * time.Second, pool: Pool{Executors: []Executor{idle("a", 0)}, Target: 1},
		target: 1, backlog: Backlog{Step: 1}},
}

func TestIdleBacklog(t *testing.T) {
	rule := IdleBacklog{Min: 1, Max: 6, IdleTimeout: 10 * time.Second, BacklogTimeout: time.Second}
	reason := "idle for 10s with no cached data (dynamic allocation)"
	for _, tc := range idleBacklogCases {
		t.Run(tc.name, func(t *testing.T) {
			d := rule.Decide(at(tc.now), tc.pool)
			var rel []string
			for _, r := range d.Releases {
				rel = append(rel, r.Executor)
				if r.Reason != reason {
					t.Errorf("reason %q, want %q", r.Reason, reason)
				}
			}
			if !reflect.DeepEqual(rel, tc.releases) {
				t.Errorf("releases %v, want %v", rel, tc.releases)
			}
			if d.Additions != tc.add || d.Target != tc.target {
				t.Errorf("additions %d target %d, want %d and %d", d.Additions, d.Target, tc.add, tc.target)
			}
			if d.Backlog != tc.backlog {
				t.Errorf("backlog %+v, want %+v", d.Backlog, tc.backlog)
			}
			if len(d.Moves) != 0 {
				t.Errorf("the idle/backlog rule moved partitions: %v", d.Moves)
			}
		})
	}
}

// TestDecideIsPure: the same question gets the same answer, whatever the
// order of the executors, and the caller's slice is left alone.
func TestDecideIsPure(t *testing.T) {
	rule := IdleBacklog{Min: 1, Max: 4, IdleTimeout: time.Second, BacklogTimeout: time.Second}
	execs := []Executor{idle("z", 0), idle("m", 0), idle("a", 0)}
	before := append([]Executor(nil), execs...)
	d1 := rule.Decide(at(time.Minute), Pool{Executors: execs, Target: 3})
	if !reflect.DeepEqual(execs, before) {
		t.Fatalf("Decide reordered its input: %v", execs)
	}
	rev := []Executor{execs[2], execs[1], execs[0]}
	d2 := rule.Decide(at(time.Minute), Pool{Executors: rev, Target: 3})
	if !reflect.DeepEqual(d1, d2) {
		t.Fatalf("order changed the decision: %+v vs %+v", d1, d2)
	}
}
