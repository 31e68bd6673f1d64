package framework

import (
	"fmt"
	"hash/fnv"
	"time"
)

// dag is the lineage: the datasets (nodes) and shuffles the application
// built, the stages cut from them, and where computed partitions live.
// Every field is guarded by Context.mu.
type dag struct {
	nodes       map[int]*node
	shuffles    map[int]*shuffleDep
	nextID      int
	nextShuffle int
	nextStage   int
	nextTask    int64
	inputBytes  int64          // bytes of the text files read, for application_end
	keySeen     map[string]int // stage shape -> stages built with it, for stageKey

	shStages  map[int]*stage      // shuffle id -> its map stage (kept across jobs)
	outputs   map[int][]loc       // shuffle id -> map partition -> where its output is
	cacheLocs map[int]map[int]loc // node id -> partition -> holder

	// lost and recomputed count cached partitions computed again after
	// their holder was lost (ispark_inputs.go).
	lost       map[int]map[int]bool
	recomputed int
}

func newDAG() dag {
	return dag{nodes: map[int]*node{}, shuffles: map[int]*shuffleDep{}, shStages: map[int]*stage{},
		outputs: map[int][]loc{}, cacheLocs: map[int]map[int]loc{}}
}

// stage is a set of tasks computing one node's partitions: a shuffle-map
// stage writes a shuffle; the result stage runs the action.
type stage struct {
	id      int
	top     *node
	write   *shuffleDep
	parents []*stage
	nodes   []*node
	name    string
	key     string // stable across runs of the same program (stageKey)
	// Per job run: written by the running job (one at a time, jobMu) under
	// Context.mu.
	submitted  bool
	start, end time.Time
	windows    map[string]*usageWindow
	fetchFails int
}

// buildStage collects the stage's lineage (narrow ancestors of top up to
// and including shuffle reads) and its parent stages.
func (d *dag) buildStage(top *node, write *shuffleDep) *stage {
	d.nextStage++
	s := &stage{id: d.nextStage, top: top, write: write, name: top.Name}
	seen := map[int]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if seen[n.ID] {
			return
		}
		seen[n.ID] = true
		s.nodes = append(s.nodes, n)
		switch n.Op {
		case "shuffled":
			for _, sid := range n.Shuffle {
				s.parents = append(s.parents, d.shuffleStage(sid))
			}
		case "text", "range", "slice":
		default:
			walk(d.nodes[n.Parent])
		}
	}
	walk(top)
	s.key = d.stageKey(s)
	return s
}

// stageKey names a stage so that the same stage of the same program gets
// the same key in every run, whatever the input paths, sizes, partition
// counts or stage ids: the operations of its lineage (op, function,
// aggregation, in walk order), the keys of its parent stages (its position
// in the DAG), and the ordinal among stages of this run with that same
// shape (a program that counts the same dataset twice builds two stages).
// The shape is hashed (FNV-64a) to keep keys short in the log.
func (d *dag) stageKey(s *stage) string {
	h := fnv.New64a()
	for _, n := range s.nodes {
		fmt.Fprintf(h, "%s/%s/%s;", n.Op, n.Fn, n.Agg)
	}
	for _, p := range s.parents {
		fmt.Fprintf(h, "<%s;", p.key)
	}
	if s.write != nil {
		h.Write([]byte("w"))
	}
	shape := fmt.Sprintf("%s-%016x", s.top.Op, h.Sum64())
	if d.keySeen == nil {
		d.keySeen = map[string]int{}
	}
	d.keySeen[shape]++
	return fmt.Sprintf("%s.%d", shape, d.keySeen[shape])
}

// shuffleStage is the map stage writing shuffle sid, built once.
func (d *dag) shuffleStage(sid int) *stage {
	if s := d.shStages[sid]; s != nil {
		return s
	}
	dep := d.shuffles[sid]
	s := d.buildStage(d.nodes[dep.Parent], dep)
	d.shStages[sid] = s
	if d.outputs[sid] == nil {
		d.outputs[sid] = make([]loc, s.top.Parts)
	}
	return s
}

// stageOrder lists final and its ancestors, parents before children.
func stageOrder(final *stage) []*stage {
	var order []*stage
	seen := map[*stage]bool{}
	var visit func(s *stage)
	visit = func(s *stage) {
		if seen[s] {
			return
		}
		seen[s] = true
		for _, p := range s.parents {
			visit(p)
		}
		order = append(order, s)
	}
	visit(final)
	return order
}

// preferred is the executor holding a cached partition a task of s on
// partition part reads, or "".
func (d *dag) preferred(s *stage, part int) string {
	for _, n := range s.nodes {
		if n.Cached {
			if l, ok := d.cacheLocs[n.ID][part]; ok {
				return l.Exec
			}
		}
	}
	return ""
}

// forgetExecutor drops every shuffle output and cached partition held by
// executor id; they are recomputed from lineage when needed. It returns how
// many cached partitions were lost.
func (d *dag) forgetExecutor(id string) (lostCached int) {
	for sid, locs := range d.outputs {
		for m, l := range locs {
			if l.Exec == id {
				d.outputs[sid][m] = loc{}
			}
		}
	}
	for node, parts := range d.cacheLocs {
		for p, l := range parts {
			if l.Exec == id {
				delete(parts, p)
				lostCached++
				d.markLost(node, p)
			}
		}
	}
	return lostCached
}

// cachedBy counts, per executor, the cached partitions the driver would
// read from it.
func (d *dag) cachedBy() map[string]int {
	out := map[string]int{}
	for _, parts := range d.cacheLocs {
		for _, l := range parts {
			out[l.Exec]++
		}
	}
	return out
}

// missingLocked lists the partitions stage s still has to compute: result
// partitions without a result, or map outputs that were never written or
// whose executor is gone. Caller holds c.mu.
func (c *Context) missingLocked(s *stage, results []*taskResult) []int {
	var out []int
	if s.write == nil {
		for p, r := range results {
			if r == nil {
				out = append(out, p)
			}
		}
		return out
	}
	for p, l := range c.dag.outputs[s.write.ID] {
		if l.Exec == "" || c.pool.execs[l.Exec] == nil {
			out = append(out, p)
		}
	}
	return out
}

// parentsReadyLocked says whether every parent stage of s has all its
// outputs. Caller holds c.mu.
func (c *Context) parentsReadyLocked(s *stage) bool {
	for _, p := range s.parents {
		if len(c.missingLocked(p, nil)) > 0 {
			return false
		}
	}
	return true
}
