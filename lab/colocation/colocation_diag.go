package colocation

import (
	"encoding/json"
	"fmt"
	allocpolicy "github.com/allot-sched/allot/allocator/policy"
	"github.com/allot-sched/allot/allocator/policy/bandit"
	"math"
	"sort"
	"strings"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
)

// Diagnostics of the co-location bandit in the simulator: why learning
// does (or does not) beat random-in-window. They measure, over seeds of
// one queue:
//
//   - the reward itself: the goodness G (eq. 1) of every usage sample,
//     grouped by the set of job types running on the node, so one can see
//     whether G separates good from bad co-locations at all;
//   - how much the bandit learns from: the updates it applied per run
//     (the preferences' sample count) and the draws made beside a
//     resident (a draw on an empty node teaches nothing);
//   - what learning could at best give: an "oracle" run whose
//     preferences are set, before the run, from the measured mean G of the
//     pairs (H(a | a') proportional to G(a, a') minus the row's mean) and
//     frozen (step 0). If even the oracle does not beat random-in-window,
//     the limit is the reward or the placement, not the learning.

// ColocationDiagnosis is the diagnostics' outcome for one queue.
type ColocationDiagnosis struct {
	Queue string `json:"queue"`
	// Rewards by node composition (distinct running types, sorted, joined
	// with "+"), over the RA runs of every seed.
	Rewards []RewardStat `json:"rewards"`
	// Seeds holds the per-seed figures, paired.
	Seeds []SeedDiagnosis `json:"seeds"`
	// Oracle is the frozen preference matrix the oracle runs used, as
	// pi(queued | running).
	Oracle map[string]map[string]float64 `json:"oracle"`
	// ProgressOracle is the same from the pairs' measured slowdowns
	// (progressOraclePreferences): what a reward by progress could give.
	ProgressOracle map[string]map[string]float64 `json:"progress_oracle"`
}

// RewardStat is G over the samples of one node composition.
type RewardStat struct {
	Types string  `json:"types"`
	N     int     `json:"n"`
	Mean  float64 `json:"mean_g"`
	SD    float64 `json:"sd_g"`
}

// SeedDiagnosis is one seed's runs.
type SeedDiagnosis struct {
	Seed uint64 `json:"seed"`
	// Makespans by policy: FIFO, random-in-window, RA, RA*, oracle.
	Makespan map[string]float64 `json:"makespan_s"`
	// Updates is how many gradient updates RA applied (Preferences' all_n).
	Updates int64 `json:"ra_updates"`
	// DrawsBeside is how many of the jobs RA started began on a node where
	// another type was already running (a draw that can teach something).
	DrawsBeside int `json:"ra_draws_beside"`
	// BaselineFinal is RA's global mean G at the end (the paper's G-bar),
	// to set the advantages G - G-bar against the spread of Rewards.
	BaselineFinal float64 `json:"ra_global_mean_g"`
}

// ColocationDiagnose runs the diagnostics for queue over seeds 1..seeds.
func ColocationDiagnose(queue string, seeds int, bc bandit.Config) (*ColocationDiagnosis, error) {
	jobs, err := ParseQueueSpec(queue, 16)
	if err != nil {
		return nil, err
	}
	w := &sim.Workload{Name: "colocation " + queue, Nodes: ColocationCluster(16), Jobs: jobs}
	d := &ColocationDiagnosis{Queue: queue}
	acc := map[string][]float64{}
	var seedRows []SeedDiagnosis
	for s := 1; s <= seeds; s++ {
		sd, err := diagnoseSeed(w, uint64(s), bc, acc)
		if err != nil {
			return nil, fmt.Errorf("seed %d: %w", s, err)
		}
		seedRows = append(seedRows, sd)
	}
	d.Rewards = rewardStats(acc)
	oracle, err := oraclePreferences(d.Rewards, 1)
	if err != nil {
		return nil, err
	}
	if d.Oracle, err = policyMatrix(oracle); err != nil {
		return nil, err
	}
	for i := range seedRows {
		res, err := runBandit(w, seedRows[i].Seed, withStep(bc, 0), oracle, nil, nil)
		if err != nil {
			return nil, err
		}
		seedRows[i].Makespan["oracle"] = res.Makespan
	}
	prog, err := progressOraclePreferences(ColocationProfiles(), 10)
	if err != nil {
		return nil, err
	}
	if d.ProgressOracle, err = policyMatrix(prog); err != nil {
		return nil, err
	}
	for i := range seedRows {
		res, err := runBandit(w, seedRows[i].Seed, withStep(bc, 0), prog, nil, nil)
		if err != nil {
			return nil, err
		}
		seedRows[i].Makespan["progress-oracle"] = res.Makespan
	}
	d.Seeds = seedRows
	return d, nil
}

func withStep(bc bandit.Config, step float64) bandit.Config {
	bc.Step = step
	return bc
}

// diagnoseSeed runs FIFO, random-in-window, RA (probed) and RA* on one seed.
func diagnoseSeed(w *sim.Workload, seed uint64, bc bandit.Config, acc map[string][]float64) (SeedDiagnosis, error) {
	sd := SeedDiagnosis{Seed: seed, Makespan: map[string]float64{}}
	fifo, err := sim.ParsePolicy("fifo", sorter.RRR)
	if err != nil {
		return sd, err
	}
	res, err := sim.Run(w, sim.Config{Policy: fifo, Mode: allocator.Characterized, Seed: seed, Interference: ColocationProfiles()})
	if bc.Chunk > 1 { // FIFO with the same placement: the bandit path, window 1
		one := withStep(bc, 0)
		one.Window = 1
		res, err = runBandit(w, seed, one, nil, nil, nil)
	}
	if err != nil {
		return sd, err
	}
	sd.Makespan["FIFO"] = res.Makespan
	if res, err = runBandit(w, seed, withStep(bc, 0), nil, nil, nil); err != nil {
		return sd, err
	}
	sd.Makespan["random-in-window"] = res.Makespan
	beside := 0
	if res, err = runBandit(w, seed, bc, nil, rewardProbe(acc), &beside); err != nil {
		return sd, err
	}
	sd.Makespan["RA"], sd.DrawsBeside = res.Makespan, beside
	var wire struct {
		AllN    int64   `json:"all_n"`
		AllMean float64 `json:"all_mean"`
	}
	if err := json.Unmarshal(res.Preferences, &wire); err != nil {
		return sd, err
	}
	sd.Updates, sd.BaselineFinal = wire.AllN, wire.AllMean
	if res, err = runBandit(w, seed, bc, res.Preferences, nil, nil); err != nil {
		return sd, err
	}
	sd.Makespan["RA*"] = res.Makespan
	return sd, nil
}

// goodnessInput is u against the paper's node's advertised bandwidths,
// as the allocator computes G.
func goodnessInput(u allocpolicy.NodeUsage) sorter.NodeUsage {
	return sorter.NodeUsage{CPU: u.CPU, IOWait: u.IOWait, DiskReadMBps: u.DiskReadMBps,
		DiskWriteMBps: u.DiskWriteMBps, NetRxMBps: u.NetRxMBps, NetTxMBps: u.NetTxMBps,
		DiskBW: 300, NetBW: 125}
}

// runBandit runs the bandit on w; probe, if set, sees every usage sample,
// and beside, if set, counts the jobs whose first task started on a node
// where another type ran.
func runBandit(w *sim.Workload, seed uint64, bc bandit.Config, prefs []byte,
	probe func(string, []string, allocpolicy.NodeUsage), beside *int) (*sim.Result, error) {
	pol, err := sim.ParsePolicy("bandit", sorter.RRR)
	if err != nil {
		return nil, err
	}
	inter := ColocationProfiles()
	inter.Probe = probe
	cfg := sim.Config{Policy: pol, Mode: allocator.Characterized, Seed: seed, Interference: inter,
		Bandit: bc, Preferences: prefs}
	if beside != nil {
		cfg.Observer = besideCounter(w, beside)
	}
	return sim.Run(w, cfg)
}

// besideCounter counts first launches of a job on an agent where tasks of
// another type run at that moment.
func besideCounter(w *sim.Workload, n *int) sim.Observer {
	typeOf := map[string]string{}
	for _, j := range w.Jobs {
		typeOf[j.ID] = j.Type
	}
	running := map[string]map[string]int{} // agent -> type -> tasks
	started := map[string]bool{}
	return sim.ObserverFunc(func(ev sim.Event) {
		on := running[ev.Agent]
		if on == nil {
			on = map[string]int{}
			running[ev.Agent] = on
		}
		t := typeOf[ev.Job]
		if ev.Kind == sim.EventFinish {
			on[t] -= ev.Tasks
			return
		}
		if !started[ev.Job] {
			started[ev.Job] = true
			for ot, c := range on {
				if ot != t && c > 0 {
					*n++
					break
				}
			}
		}
		on[t] += ev.Tasks
	})
}

func rewardStats(acc map[string][]float64) []RewardStat {
	var out []RewardStat
	for k, gs := range acc {
		var sum float64
		for _, g := range gs {
			sum += g
		}
		out = append(out, RewardStat{Types: k, N: len(gs), Mean: sum / float64(len(gs)), SD: sim.StdDev(gs)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Mean > out[j].Mean })
	return out
}

// oraclePreferences builds exported preferences with H(a | a') = beta (G
// of the pair a+a' (or a alone on the node when a = a') minus the mean
// over a of row a'), from the measured rewards.
func oraclePreferences(rs []RewardStat, beta float64) ([]byte, error) {
	g := map[string]float64{}
	for _, r := range rs {
		g[r.Types] = r.Mean
	}
	types := ColocationTypes
	h := make([][]float64, len(types))
	for i, r := range types {
		h[i] = make([]float64, len(types))
		var row []float64
		for _, a := range types {
			k := r
			if a != r {
				pair := []string{r, a}
				sort.Strings(pair)
				k = strings.Join(pair, "+")
			}
			row = append(row, g[k])
		}
		mean := 0.0
		for _, v := range row {
			mean += v / float64(len(row))
		}
		for j, v := range row {
			h[i][j] = beta * (v - mean)
			if math.IsNaN(h[i][j]) {
				h[i][j] = 0
			}
		}
	}
	n := len(types)
	return json.Marshal(map[string]any{"version": 1, "types": types, "h": h,
		"row_n": make([]int64, n), "row_mean": make([]float64, n), "all_n": 0, "all_mean": 0})
}

// progressOraclePreferences builds exported preferences from the pairs'
// measured slowdowns on one node of the model (pairDurations, as
// Calibrate): H(a | a') = -beta (the pair's summed duration change
// co-located against separated), so a pair that slows both jobs less is
// preferred. The ceiling of a reward by progress rather than by G.
func progressOraclePreferences(m *sim.Interference, beta float64) ([]byte, error) {
	types := ColocationTypes
	sep := map[string]float64{}
	for _, t := range types {
		d, err := pairDurations(m, t, "", 4)
		if err != nil {
			return nil, err
		}
		sep[t] = d[0]
	}
	h := make([][]float64, len(types))
	for i, r := range types {
		h[i] = make([]float64, len(types))
		row := make([]float64, len(types))
		mean := 0.0
		for j, a := range types {
			d, err := pairDurations(m, r, a, 2)
			if err != nil {
				return nil, err
			}
			row[j] = -(d[0]/sep[r] - 1 + d[1]/sep[a] - 1)
			mean += row[j] / float64(len(types))
		}
		for j := range row {
			h[i][j] = beta * (row[j] - mean)
		}
	}
	n := len(types)
	return json.Marshal(map[string]any{"version": 1, "types": types, "h": h,
		"row_n": make([]int64, n), "row_mean": make([]float64, n), "all_n": 0, "all_mean": 0})
}

// rewardProbe collects into acc the goodness G of every sample of a node
// running something, by the node's composition.
func rewardProbe(acc map[string][]float64) func(string, []string, allocpolicy.NodeUsage) {
	return func(_ string, types []string, u allocpolicy.NodeUsage) {
		if len(types) == 0 {
			return
		}
		k := strings.Join(types, "+")
		acc[k] = append(acc[k], sorter.Goodness(goodnessInput(u)))
	}
}

// oracleRuns adds the rows oracle-G and oracle-progress to runs: every
// seed again with frozen preferences (step 0) built from the rewards RA
// measured (acc) and from the pairs' slowdowns.
func oracleRuns(w *sim.Workload, opt ColocationOptions, acc map[string][]float64, runs map[string][]*sim.Result) error {
	byG, err := oraclePreferences(rewardStats(acc), 1)
	if err != nil {
		return err
	}
	byProgress, err := progressOraclePreferences(ColocationProfiles(), 10)
	if err != nil {
		return err
	}
	for s := 1; s <= opt.Seeds; s++ {
		for name, prefs := range map[string][]byte{"oracle-G": byG, "oracle-progress": byProgress} {
			res, err := runBandit(w, uint64(s), withStep(opt.Bandit, 0), prefs, nil, nil)
			if err != nil {
				return fmt.Errorf("%s seed %d: %w", name, s, err)
			}
			runs[name] = append(runs[name], res)
		}
	}
	return nil
}
