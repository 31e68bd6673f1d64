package elastic

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// ex is a 1-core, 2 GB executor (the paper's size) with the given CPU and
// memory utilisation and U_max, busy so the idle rule leaves it alone.
func ex(id string, cpu, mem, umax float64) Executor {
	return Executor{ID: id, Cores: 1, MemMB: 2048, Running: 1, IdleSince: t0, CPUUtil: cpu, MemUtil: mem, UMax: umax}
}

func withCache(e Executor, capacity int64, ps ...CachedPartition) Executor {
	e.CacheBytes, e.Cache = capacity, ps
	return e
}

func cp(node, part int, bytes int64, flags string) CachedPartition {
	return CachedPartition{Partition: Partition{node, part}, Bytes: bytes, VIP: strings.Contains(flags, "v"), Done: strings.Contains(flags, "d")}
}

func parts(ps ...int) []Partition {
	var out []Partition
	for i := 0; i < len(ps); i += 2 {
		out = append(out, Partition{ps[i], ps[i+1]})
	}
	return out
}

var scale = IdleBacklog{Min: 1, Max: 8, IdleTimeout: time.Minute, BacklogTimeout: time.Second}

// iSparkDecideCase is one pool shown to an ISpark policy and the decision
// expected of it.
type iSparkDecideCase struct {
	name     string
	policy   ISpark
	pool     Pool
	releases []string
	add      int
	target   int
	ceiling  int
	why      string // the rule named for the additions
}

// decideDF and decideCF are the dominant-factor and CPU-factor policies the
// decision cases ask.
var (
	decideDF = ISpark{Scale: scale}
	decideCF = ISpark{Scale: scale, CPUOnly: true}
)

// fig4 is Fig. 4: A (cpu .3, mem .4), B (.3, .45), C (.1, .2). With
// min(theta, U_max) = 0.7: by CPU alone B and C fit into A (A at cpu
// .7, but memory 1.05); by the dominant factor B (.45) opens, A (.4)
// does not fit beside it (.85 > .7) and opens, C (.2) goes to the
// fuller of the two that fits: B at .65 (A would be .6).
var fig4 = []Executor{ex("A", .3, .4, .7), ex("B", .3, .45, .7), ex("C", .1, .2, .7)}

// iSparkDecideCases cover packing (who gives to whom), heat and the ceiling.
var iSparkDecideCases = []iSparkDecideCase{
	{name: "Fig. 4, dominant factor: only C gives, to B",
		policy: decideDF, pool: Pool{Executors: fig4, Target: 3, OthersWaiting: true},
		releases: []string{"C>B"}, target: 2, ceiling: 2},
	{name: "Fig. 4, CPU factor: B and C both give to A",
		policy: decideCF, pool: Pool{Executors: fig4, Target: 3, OthersWaiting: true},
		releases: []string{"B>A", "C>A"}, target: 1, ceiling: 1},
	{name: "nobody waits: no moves, no releases",
		policy: decideDF, pool: Pool{Executors: fig4, Target: 3},
		target: 3},
	{name: "nobody at or below gamma: nothing packs",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .6, .3, 1), ex("B", .55, .2, 1)}, Target: 2, OthersWaiting: true},
		target: 2},
	{name: "gamma is inclusive; no history means capacity theta",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .5, .1, 0), ex("B", .5, .1, 0)}, Target: 2, OthersWaiting: true},
		releases: []string{"B>A"}, target: 1, ceiling: 1},
	{name: "U_max caps the receiver: .3 + .3 > .5",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .3, .1, .5), ex("B", .3, .1, .5)}, Target: 2, OthersWaiting: true},
		target: 2},
	{name: "U_max is the application's: executors added late pair up under the early one's",
		// B and C joined after the busy iterations (their own U_max .4);
		// eq. 3's min(theta, U_max) is A's .9 for all: C (.3) fits B.
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .85, .2, .9), ex("B", .3, .1, .4), ex("C", .3, .1, .4)}, Target: 3, OthersWaiting: true},
		releases: []string{"C>B"}, target: 2, ceiling: 2},
	{name: "U_max is the application's: hot against it with no history of its own",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .3, .1, .5), ex("B", .6, .1, 0)}, Target: 2, OthersWaiting: true},
		add: 1, target: 3, why: "utilisation of B above h x capacity"},
	{name: "never below Min",
		policy: ISpark{Scale: IdleBacklog{Min: 2, Max: 8}}, pool: Pool{Executors: []Executor{ex("A", .1, .1, 1), ex("B", .1, .1, 1), ex("C", .1, .1, 1)}, Target: 3, OthersWaiting: true},
		releases: []string{"B>A"}, target: 2, ceiling: 2},
	{name: "busy executors receive, the under-used give (best fit: the fuller)",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .6, .2, 1), ex("B", .7, .2, 1), ex("C", .3, .2, 1), ex("D", .2, .1, 1)}, Target: 4, OthersWaiting: true},
		// C (.3) fits B (1.0) best; D (.2) then fits only A (.8).
		releases: []string{"C>B", "D>A"}, target: 2, ceiling: 2},
	{name: "hot executor: one more, and no shrink this round",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .9, .2, .8), ex("B", .1, .1, .8)}, Target: 2, OthersWaiting: true},
		add: 1, target: 3, why: "utilisation of A above h x capacity"},
	{name: "exactly h x capacity is not hot",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .55, .2, .5)}, Target: 1, OthersWaiting: true},
		target: 1},
	{name: "DF watches memory for heat, CF does not",
		policy: decideCF, pool: Pool{Executors: []Executor{ex("A", .5, .95, .6)}, Target: 1},
		target: 1},
	{name: "DF: memory past h x capacity is hot",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .5, .95, .6)}, Target: 1},
		add: 1, target: 2, why: "utilisation of A above h x capacity"},
	{name: "hot at Max: nothing to add",
		policy: ISpark{Scale: IdleBacklog{Min: 1, Max: 1}}, pool: Pool{Executors: []Executor{ex("A", .99, .2, .5)}, Target: 1},
		target: 1},
	{name: "shrunk: the backlog rule may not grow past the ceiling",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .7, .2, .8), ex("B", .7, .2, .8)}, Pending: 4, Target: 2, OthersWaiting: true,
			Backlog: Backlog{Since: t0, Step: 2, Ceiling: 2}},
		target: 2, ceiling: 2},
	{name: "hot while shrunk: the ceiling rises by the one added",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .95, .2, .8), ex("B", .7, .2, .8)}, Pending: 4, Target: 2, OthersWaiting: true,
			Backlog: Backlog{Since: t0.Add(time.Minute), Ceiling: 2}},
		add: 1, target: 3, ceiling: 3, why: "utilisation of A above h x capacity"},
	{name: "nobody waits any more: the ceiling lifts and the backlog rule grows",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .7, .2, .8), ex("B", .7, .2, .8)}, Pending: 4, Target: 2,
			Backlog: Backlog{Since: t0, Step: 2, Ceiling: 2}},
		add: 2, target: 4, why: "backlog"},
	{name: "a shrink cancels this round's backlog addition",
		policy: decideDF, pool: Pool{Executors: []Executor{ex("A", .4, .2, 1), ex("B", .3, .2, 1)}, Pending: 4, Target: 2, OthersWaiting: true,
			Backlog: Backlog{Since: t0, Step: 1}},
		releases: []string{"B>A"}, target: 1, ceiling: 1},
}

func TestISparkDecide(t *testing.T) {
	for _, tc := range iSparkDecideCases {
		t.Run(tc.name, func(t *testing.T) {
			d := tc.policy.Decide(at(time.Minute), tc.pool)
			var rel []string
			for _, r := range d.Releases {
				rel = append(rel, r.Executor+">"+r.Receiver)
			}
			if !reflect.DeepEqual(rel, tc.releases) {
				t.Errorf("releases (giver>receiver) %v, want %v", rel, tc.releases)
			}
			if len(d.Moves) != 0 {
				t.Errorf("moves %+v without cached partitions", d.Moves)
			}
			if d.Why != tc.why {
				t.Errorf("additions explained as %q, want %q", d.Why, tc.why)
			}
			if d.Additions != tc.add || d.Target != tc.target || d.Backlog.Ceiling != tc.ceiling {
				t.Errorf("additions %d target %d ceiling %d, want %d, %d, %d", d.Additions, d.Target, d.Backlog.Ceiling, tc.add, tc.target, tc.ceiling)
			}
		})
	}
}

// TestISparkHandoff: which partitions a giver ships, in what order, where
// they land and what a receiver evicts to take them.
func TestISparkHandoff(t *testing.T) {
	policy := ISpark{Scale: scale}
	cases := []struct {
		name     string
		execs    []Executor
		releases []string
		moves    []Move
		dropped  []Partition
	}{
		{name: "VIP first, then highest partition id; done partitions stay behind",
			execs: []Executor{ex("A", .6, .2, 1), withCache(ex("B", .1, .1, 1), 0,
				cp(1, 0, 10, ""), cp(1, 5, 10, ""), cp(2, 1, 10, "v"), cp(2, 3, 10, "v"), cp(1, 2, 10, "d"))},
			releases: []string{"B"},
			moves:    []Move{{From: "B", To: "A", Partitions: parts(2, 3, 2, 1, 1, 5, 1, 0)}},
			dropped:  parts(1, 2)},
		{name: "a receiver short of room evicts done partitions (lowest id first), never a VIP one",
			execs: []Executor{withCache(ex("A", .6, .2, 1), 100, cp(3, 9, 30, "v"), cp(0, 1, 30, "d"), cp(0, 0, 30, "d")),
				withCache(ex("B", .1, .1, 1), 100, cp(2, 4, 40, "v"))},
			releases: []string{"B"},
			moves:    []Move{{From: "B", To: "A", Partitions: parts(2, 4), Evict: parts(0, 0)}}},
		{name: "no room on the receiver: the next staying executor takes it",
			execs: []Executor{withCache(ex("A", .6, .2, 1), 50, cp(3, 9, 40, "v")), withCache(ex("B", .55, .2, 1), 100),
				withCache(ex("C", .1, .1, 1), 100, cp(2, 4, 30, "v"), cp(2, 1, 5, "v"))},
			// C's load goes to A (.7 beats B's .65); 2/4 has no room there.
			releases: []string{"C"},
			moves:    []Move{{From: "C", To: "B", Partitions: parts(2, 4)}, {From: "C", To: "A", Partitions: parts(2, 1)}}},
		{name: "a non-VIP partition with no room anywhere is dropped",
			execs: []Executor{withCache(ex("A", .6, .2, 1), 50, cp(3, 9, 40, "v")),
				withCache(ex("B", .1, .1, 1), 100, cp(2, 4, 30, ""), cp(2, 1, 5, "v"))},
			releases: []string{"B"},
			moves:    []Move{{From: "B", To: "A", Partitions: parts(2, 1)}},
			dropped:  parts(2, 4)},
		{name: "a VIP partition with no room anywhere keeps its giver",
			execs: []Executor{withCache(ex("A", .6, .2, 1), 50, cp(3, 9, 40, "v")),
				withCache(ex("B", .1, .1, 1), 100, cp(2, 4, 30, "v"))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := policy.Decide(at(time.Minute), Pool{Executors: tc.execs, Target: len(tc.execs), OthersWaiting: true})
			var rel []string
			var dropped []Partition
			for _, r := range d.Releases {
				rel = append(rel, r.Executor)
				dropped = append(dropped, r.Dropped...)
			}
			if !reflect.DeepEqual(rel, tc.releases) {
				t.Errorf("releases %v, want %v", rel, tc.releases)
			}
			if !reflect.DeepEqual(d.Moves, tc.moves) {
				t.Errorf("moves %+v, want %+v", d.Moves, tc.moves)
			}
			if !reflect.DeepEqual(dropped, tc.dropped) {
				t.Errorf("dropped %v, want %v", dropped, tc.dropped)
			}
		})
	}
}

// TestISparkIsPure: input order and the caller's slices do not matter.
func TestISparkIsPure(t *testing.T) {
	policy := ISpark{Scale: scale}
	execs := []Executor{withCache(ex("C", .1, .2, .7), 10, cp(1, 1, 5, "v")), ex("A", .3, .4, .7), withCache(ex("B", .3, .45, .7), 10, cp(1, 0, 5, "d"))}
	before := append([]Executor(nil), execs...)
	d1 := policy.Decide(at(time.Minute), Pool{Executors: execs, Target: 3, OthersWaiting: true})
	if !reflect.DeepEqual(execs, before) {
		t.Fatalf("Decide changed its input")
	}
	d2 := policy.Decide(at(time.Minute), Pool{Executors: []Executor{execs[1], execs[2], execs[0]}, Target: 3, OthersWaiting: true})
	if !reflect.DeepEqual(d1, d2) {
		t.Fatalf("order changed the decision: %+v vs %+v", d1, d2)
	}
	if len(d1.Releases) != 1 || d1.Releases[0].Executor != "C" || !strings.Contains(d1.Releases[0].Reason, "gamma 0.50") {
		t.Fatalf("unexpected decision %+v", d1)
	}
}
