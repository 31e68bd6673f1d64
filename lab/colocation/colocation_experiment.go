package colocation

import (
	"fmt"
	banditpolicy "github.com/allot-sched/allot/allocator/policy/bandit"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
)

// The co-location paper's queue experiment (section 6) in the simulator
// with the interference model on: its 16 nodes, queues of 48 jobs, each
// job a quarter of the cluster's containers, under FIFO, RA (the bandit
// from zero), RA* (the bandit warm-started with the preferences an RA run
// of the same seed learned: the paper's "previous run") and
// random-in-window (step size 0: the bandit's reordering without its
// learning). Runs are paired by seed: the same seed, the same agent
// shuffles.

// ColocationOptions are the experiment's parameters.
type ColocationOptions struct {
	Queues []string // "A", "B" or a SPEC (ParseQueueSpec)
	Seeds  int      // runs per queue and policy, seeds 1..Seeds
	Nodes  int      // default 16
	Bandit banditpolicy.Config
	// Spread, if set, keeps one task per agent visit and FIFO as the fifo
	// sorter (the placement before the paper's triplets were followed).
	// Unset (the default), the paper's placement (section 6.1) is used by
	// every policy alike: triplets, Bandit.Chunk = 3 unless given, and FIFO
	// is the bandit path with a window of one (the queue's order).
	Spread bool
	// Oracles adds two frozen-preference rows (colocation_diag.go):
	// "oracle-G", preferences from the mean goodness G the RA runs measured
	// per pair, and "oracle-progress", from the pairs' slowdowns on one
	// node: what learning could at best give with either reward.
	Oracles bool
	// Beyond adds the rows beyond the paper, each the bandit from
	// zero: "RA-set" (goodness, one preference row per set of resident
	// types), "RA-progress" (reward: the co-location's progress rate over
	// solo, banditpolicy.RewardProgress, with step ProgressStep) and
	// "RA-progress-set" (both).
	Beyond       bool
	ProgressStep float64 // 0 means 1
}

// ColocationRow is one queue under one policy over the seeds.
type ColocationRow struct {
	Queue    string  `json:"queue"`
	Policy   string  `json:"policy"`
	Makespan float64 `json:"makespan_s"`  // median over seeds
	SD       float64 `json:"makespan_sd"` // standard deviation over seeds
	// Change is the median over seeds of this policy's makespan over
	// FIFO's of the same seed, minus one.
	Change float64 `json:"change_vs_fifo"`
	// P99Wait is the median over seeds of the 99th percentile of the
	// jobs' waits (start - arrival).
	P99Wait float64 `json:"p99_wait_s"`
}

// ColocationReport is the experiment's outcome.
type ColocationReport struct {
	Rows []ColocationRow `json:"rows"`
	// Prefs is, per queue, pi(queued | running) over the four types as RA*
	// of the first seed ended with.
	Prefs       map[string]map[string]map[string]float64 `json:"prefs"`
	Calibration []CalibrationRow                         `json:"calibration"`
}

// ParseQueueSpec reads "A" (m = 4, n = 3), "B" (m = 3, n = 4) or a
// composition such as "KM*4,CC*4,Q10*4,Q3*4 x3": blocks of job types in
// order, the whole repeated xN times (default once).
func ParseQueueSpec(spec string, containers int) ([]sim.Job, error) {
	switch strings.ToUpper(strings.TrimSpace(spec)) {
	case "A":
		return ColocationQueue(4, 3, containers), nil
	case "B":
		return ColocationQueue(3, 4, containers), nil
	}
	body, rep := spec, 1
	if i := strings.LastIndex(spec, " x"); i >= 0 {
		n, err := strconv.Atoi(strings.TrimSpace(spec[i+2:]))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("queue %q: the repeat after x must be a positive number", spec)
		}
		body, rep = spec[:i], n
	}
	var jobs []sim.Job
	for r := 0; r < rep; r++ {
		for _, block := range strings.Split(body, ",") {
			typ, count, _ := strings.Cut(strings.TrimSpace(block), "*")
			n := 1
			if count != "" {
				var err error
				if n, err = strconv.Atoi(count); err != nil || n < 1 {
					return nil, fmt.Errorf("queue %q: block %q needs TYPE*COUNT", spec, block)
				}
			}
			if _, ok := colocationStages[typ]; !ok {
				return nil, fmt.Errorf("queue %q: unknown job type %q (have %v)", spec, typ, ColocationTypes)
			}
			for i := 0; i < n; i++ {
				jobs = append(jobs, ColocationJob(fmt.Sprintf("%s-%d", typ, len(jobs)), typ, containers, 0))
			}
		}
	}
	return jobs, nil
}

// colocationPolicies in the order they are reported.
var colocationPolicies = []string{"FIFO", "RA", "RA*", "random-in-window", "oracle-G", "oracle-progress",
	"RA-set", "RA-progress", "RA-progress-set"}

// ColocationExperiment runs the experiment.
func ColocationExperiment(opt ColocationOptions) (*ColocationReport, error) {
	if opt.Nodes <= 0 {
		opt.Nodes = 16
	}
	if opt.Seeds <= 0 {
		opt.Seeds = 10
	}
	if !opt.Spread && opt.Bandit.Chunk == 0 {
		opt.Bandit.Chunk = 3
	}
	rep := &ColocationReport{Prefs: map[string]map[string]map[string]float64{}}
	for _, q := range opt.Queues {
		jobs, err := ParseQueueSpec(q, opt.Nodes) // a quarter of 4 containers per node
		if err != nil {
			return nil, err
		}
		w := &sim.Workload{Name: "colocation " + q, Nodes: ColocationCluster(opt.Nodes), Jobs: jobs}
		runs := map[string][]*sim.Result{}
		acc := map[string][]float64{} // G by node composition, from RA's samples
		for s := 1; s <= opt.Seeds; s++ {
			if err := colocationSeed(w, opt, uint64(s), runs, acc); err != nil {
				return nil, fmt.Errorf("queue %s seed %d: %w", q, s, err)
			}
		}
		if opt.Oracles {
			if err := oracleRuns(w, opt, acc, runs); err != nil {
				return nil, fmt.Errorf("queue %s: %w", q, err)
			}
		}
		rep.Rows = append(rep.Rows, colocationRows(q, runs)...)
		if rep.Prefs[q], err = policyMatrix(runs["RA*"][0].Preferences); err != nil {
			return nil, err
		}
	}
	var err error
	rep.Calibration, err = Calibrate(ColocationProfiles())
	return rep, err
}

// colocationSeed runs every policy on w with one seed.
func colocationSeed(w *sim.Workload, opt ColocationOptions, seed uint64, runs map[string][]*sim.Result, acc map[string][]float64) error {
	inter := ColocationProfiles()
	fifo, err := sim.ParsePolicy("fifo", sorter.RRR)
	if err != nil {
		return err
	}
	bandit, err := sim.ParsePolicy("bandit", sorter.RRR)
	if err != nil {
		return err
	}
	base := sim.Config{Mode: allocator.Characterized, Seed: seed, Interference: inter}
	random := opt.Bandit
	random.Step = 0
	fifoCfg := withPolicy(base, fifo, opt.Bandit, nil)
	if !opt.Spread {
		fifoBandit := random
		fifoBandit.Window = 1
		fifoCfg = withPolicy(base, bandit, fifoBandit, nil)
	}
	probed := *inter
	probed.Probe = rewardProbe(acc)
	ra := withPolicy(base, bandit, opt.Bandit, nil)
	ra.Interference = &probed
	cfgs := map[string]sim.Config{"FIFO": fifoCfg, "RA": ra, "random-in-window": withPolicy(base, bandit, random, nil)}
	for _, name := range []string{"FIFO", "RA", "random-in-window"} {
		res, err := sim.Run(w, cfgs[name])
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		runs[name] = append(runs[name], res)
	}
	warm := runs["RA"][len(runs["RA"])-1].Preferences
	res, err := sim.Run(w, withPolicy(base, bandit, opt.Bandit, warm))
	if err != nil {
		return fmt.Errorf("RA*: %w", err)
	}
	runs["RA*"] = append(runs["RA*"], res)
	if opt.Beyond {
		return beyondSeed(w, opt, base, bandit, runs)
	}
	return nil
}

// beyondSeed runs the rows of ColocationOptions.Beyond on one seed.
func beyondSeed(w *sim.Workload, opt ColocationOptions, base sim.Config, bandit sim.Policy, runs map[string][]*sim.Result) error {
	step := opt.ProgressStep
	if step == 0 {
		step = 1
	}
	set, prog := opt.Bandit, opt.Bandit
	set.ResidentSet = true
	prog.Reward, prog.Step = banditpolicy.RewardProgress, step
	progSet := prog
	progSet.ResidentSet = true
	for _, r := range []struct {
		name string
		bc   banditpolicy.Config
	}{{"RA-set", set}, {"RA-progress", prog}, {"RA-progress-set", progSet}} {
		res, err := sim.Run(w, withPolicy(base, bandit, r.bc, nil))
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		runs[r.name] = append(runs[r.name], res)
	}
	return nil
}

func withPolicy(c sim.Config, p sim.Policy, b banditpolicy.Config, prefs []byte) sim.Config {
	c.Policy, c.Bandit, c.Preferences = p, b, prefs
	return c
}

// colocationRows summarises the runs of one queue, paired by seed.
func colocationRows(q string, runs map[string][]*sim.Result) []ColocationRow {
	var rows []ColocationRow
	for _, name := range colocationPolicies {
		if len(runs[name]) == 0 {
			continue
		}
		var ms, ch, waits []float64
		for i, r := range runs[name] {
			ms = append(ms, r.Makespan)
			ch = append(ch, r.Makespan/runs["FIFO"][i].Makespan-1)
			waits = append(waits, p99Wait(r))
		}
		rows = append(rows, ColocationRow{Queue: q, Policy: name, Makespan: sim.Median(ms), SD: sim.StdDev(ms),
			Change: sim.Median(ch), P99Wait: sim.Median(waits)})
	}
	return rows
}

func p99Wait(r *sim.Result) float64 {
	var w []float64
	for _, j := range r.JobStats {
		w = append(w, j.Start-j.Arrive)
	}
	if len(w) == 0 {
		return 0
	}
	sort.Float64s(w)
	return w[int(math.Ceil(0.99*float64(len(w))))-1]
}

// policyMatrix turns exported preferences into pi(queued | running) over
// the four types, as the paper's Fig. 8 shows them.
func policyMatrix(exported []byte) (map[string]map[string]float64, error) {
	p := sorter.NewPreferences(0, sorter.BaselinePerRow)
	if err := p.Restore(exported); err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	for _, r := range ColocationTypes {
		types, probs := p.Policy([]string{r}, ColocationTypes)
		out[r] = map[string]float64{}
		for i, t := range types {
			out[r][t] = probs[i]
		}
	}
	return out, nil
}
