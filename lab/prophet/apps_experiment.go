package prophet

import (
	"fmt"
	"math"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
)

// ProphetRow is one policy's line of `allot experiment prophet`, averaged
// over seeds (each seed a fresh arrival draw and prediction error).
type ProphetRow struct {
	Policy string `json:"policy"`
	// Calibrated marks a row whose figure the workload was fitted to, so
	// that it is not read as reproduced; Calibration says to what
	// (ProphetCalibration).
	Calibrated    bool    `json:"calibrated"`
	Calibration   string  `json:"calibration,omitempty"`
	Makespan      float64 `json:"makespan_s"`
	MakespanSD    float64 `json:"makespan_sd"`
	ExecP50       float64 `json:"exec_p50_s"`
	JCTP50        float64 `json:"jct_p50_s"`
	OverallocFrac float64 `json:"overalloc_frac"`
	BWUtil        float64 `json:"bw_util"`
}

// ProphetPaper is the paper's Table III (makespans, seconds) for the table.
var ProphetPaper = map[string]float64{
	"capacity": 16604, "drf": 18369, "tetris-peak": 25537, "prophet": 11290, "prophet-nobackoff": 15707,
}

// ProphetCalibration says how a row's makespan was obtained where it is
// fitted rather than reproduced, and "" for a row that is only simulated.
// DefaultProphetWorkload was fitted on the three baselines alone, against
// Table III's CS makespan and its DRF/CS and Tetris/CS ratios (at beta
// DefaultBeta, 10 % prediction error), so those rows sit near the paper
// by construction; every Prophet row runs the same workload unfitted.
func ProphetCalibration(policy string) string {
	cs := ProphetPaper["capacity"]
	switch policy {
	case "capacity":
		return fmt.Sprintf("calibrated: DefaultProphetWorkload fitted so this row's makespan came near the paper's %.0f s (Table III's CS)", cs)
	case "drf":
		return fmt.Sprintf("calibrated: DefaultProphetWorkload fitted toward Table III's DRF/CS ratio %.3f (the paper's %.0f s)", ProphetPaper["drf"]/cs, ProphetPaper["drf"])
	case "tetris-peak":
		return fmt.Sprintf("calibrated: DefaultProphetWorkload fitted toward Table III's Tetris/CS ratio %.3f (the paper's %.0f s)", ProphetPaper["tetris-peak"]/cs, ProphetPaper["tetris-peak"])
	}
	return ""
}

// ProphetPaperBackoffShare is Fig. 11: Prophet over Prophet without task
// backoff, median reduction of execution and of completion time.
var ProphetPaperBackoffShare = BackoffShare{Exec: 0.13, JCT: 0.10}

// ProphetPolicies are the experiment's rows: the paper's CS (allot's
// capacity), DRF, Tetris (tetris-peak), Prophet with task backoff
// (prophet, backoff.go's DefaultBackoff) and without (prophet-nobackoff),
// then four rows beyond the paper, all without backoff so that they
// compare with prophet-nobackoff: F and O normalised by capacity
// (prophet-capnorm); timelines re-anchored on stage progress reported
// every ProphetProgressEvery steps and at stage entries (prophet-reanchor,
// apps_progress.go); predictions 20 % wrong instead of --pred-error
// (prophet-err20); deadlines from the waiting queue's current mean wait
// instead of the placed applications' (prophet-dlpending,
// allocator.DeadlinePending); and drf in the master with Prophet placement
// in the framework (drf-prophetfw, apps_fwplace.go).
//
// Findings (calibrated workload, 10 % prediction error, beta 0.3; the
// diagnostics of apps_diag.go, seed 1): prophet-nobackoff over-allocates
// in about 0.76 of agent-steps, no less than CS (0.73), unlike the paper's
// Figs. 9-10. Anchored at launch, the timeline is stale: 59 % of
// executor-steps run past their predicted end and 74 % of the
// over-allocated device-steps look within capacity on the timeline.
// Re-anchoring fixes the prediction (1 % missed, 0.2 % past the end) but
// not the makespan (15,310 s against 15,420 s over seeds 1-3): staleness is
// real but not why Prophet over-allocates. The cause is the load: the
// mean actual demand over capacity is 1.33 (disk) and 1.29 (network) under
// prophet-nobackoff, 1.34 and 1.26 under CS, so the executors that cpu and
// memory admit (8 per server by memory) over-commit both devices on
// average, and Algorithm 1 places whenever cpu and memory fit: the score
// only chooses the least bad mix. A defect was found and fixed on the way:
// a mean wait of zero (the first gangs are placed at once) gave deadlines
// equal to arrival, so 534 of 540 executors were placed as overdue, in
// deadline order, and the score chose one application in 90 (seed 1); a
// zero mean now sets no deadline, as no mean did. The makespan moved
// within the seed spread (13,936 to 14,069 s; median JCT 6,626 to
// 5,898 s). Without deadlines at all the score chooses everything and the
// makespan is worse (15,734 and 16,214 s, seeds 1-2, no backoff). Doubling the prediction error changes
// the makespan by under 0.1 %. Under drf a framework is rarely offered
// more agents than it still wants (21 of 439 offer rounds, seed 1: drf
// hands out each freed executor slot as it frees), so Prophet placement
// in the framework seldom has a choice.
var ProphetPolicies = []string{"capacity", "drf", "tetris-peak", "prophet", "prophet-nobackoff",
	"prophet-capnorm", "prophet-reanchor", "prophet-err20", "prophet-dlpending", "drf-prophetfw"}

// prophetRun is how one row runs.
type prophetRun struct {
	crit     string
	gang     *allocator.GangParams
	predErr  float64
	backoff  *BackoffParams
	progress int                 // AppConfig.Progress
	fw       *FrameworkPlacement // AppConfig.FrameworkPlace
}

// ProphetProgressEvery is the prophet-reanchor row's reporting period in
// steps (seconds): every 10 s, and at every stage entry.
const ProphetProgressEvery = 10

// prophetVariant maps a row to how it runs.
func prophetVariant(row string, predErr float64) prophetRun {
	switch row {
	case "prophet":
		b := DefaultBackoff
		return prophetRun{crit: "prophet", predErr: predErr, backoff: &b}
	case "prophet-nobackoff":
		return prophetRun{crit: "prophet", predErr: predErr}
	case "prophet-capnorm":
		p := allocator.DefaultGangParams()
		p.Score.Normalize = profile.NormCapacity
		return prophetRun{crit: "prophet", gang: &p, predErr: predErr}
	case "prophet-reanchor":
		return prophetRun{crit: "prophet", predErr: predErr, progress: ProphetProgressEvery}
	case "prophet-err20":
		return prophetRun{crit: "prophet", predErr: 0.2}
	case "prophet-dlpending":
		p := allocator.DefaultGangParams()
		p.DeadlineMean = allocator.DeadlinePending
		return prophetRun{crit: "prophet", gang: &p, predErr: predErr}
	case "drf-prophetfw":
		fw := DefaultFrameworkPlacement
		return prophetRun{crit: "drf", predErr: predErr, fw: &fw}
	}
	return prophetRun{crit: row, predErr: predErr}
}

// ProphetOptions are the experiment's knobs.
type ProphetOptions struct {
	Seeds     int     // runs per policy, seeds 1..Seeds
	PredError float64 // relative prediction error (Predict)
	Beta      float64 // the degradation law's beta
}

// BackoffShare is the paired median reduction, per application, of
// execution and completion time by prophet over prophet-nobackoff.
type BackoffShare struct {
	Exec float64 `json:"exec_reduction_p50"`
	JCT  float64 `json:"jct_reduction_p50"`
}

// ProphetReport is the experiment's result.
type ProphetReport struct {
	Rows []ProphetRow `json:"rows"`
	// Backoff is Fig. 11's statistic over all seeds' applications.
	Backoff BackoffShare `json:"backoff_share"`
	// Backoffs is the mean number of backoff episodes per run (an executor
	// flagged while not already backed off; a hold renewed does not count).
	Backoffs float64 `json:"backoffs_per_run"`
}

// ProphetExperiment runs every policy of ProphetPolicies on ProphetSetup
// for each seed.
func ProphetExperiment(o ProphetOptions) (ProphetReport, error) {
	var rep ProphetReport
	per := map[string][]AppResult{}
	for _, name := range ProphetPolicies {
		v := prophetVariant(name, o.PredError)
		p, err := sim.ParsePolicy(v.crit, sorter.RRR)
		if err != nil {
			return rep, err
		}
		for seed := uint64(1); seed <= uint64(max(o.Seeds, 1)); seed++ {
			apps, nodes := ProphetSetup(seed, v.predErr)
			res, err := RunApps(apps, nodes, AppConfig{Policy: p, Seed: seed, Degrade: true, Beta: o.Beta, Gang: v.gang,
				Backoff: v.backoff, Progress: v.progress, FrameworkPlace: v.fw})
			if err != nil {
				return rep, err
			}
			per[name] = append(per[name], res)
		}
		rep.Rows = append(rep.Rows, prophetRow(name, per[name]))
	}
	var ex, exNo, jct, jctNo []float64
	for i, res := range per["prophet"] {
		no := per["prophet-nobackoff"][i]
		ex, exNo = append(ex, res.Exec...), append(exNo, no.Exec...)
		jct, jctNo = append(jct, res.JCT...), append(jctNo, no.JCT...)
		rep.Backoffs += float64(res.Backoffs) / float64(len(per["prophet"]))
	}
	rep.Backoff = BackoffShare{Exec: sim.Round(backoffShare(ex, exNo)), JCT: sim.Round(backoffShare(jct, jctNo))}
	rep.Backoffs = sim.Round(rep.Backoffs)
	return rep, nil
}

// prophetRow averages one policy's runs.
func prophetRow(name string, runs []AppResult) ProphetRow {
	row := ProphetRow{Policy: name, Calibration: ProphetCalibration(name)}
	row.Calibrated = row.Calibration != ""
	n := float64(len(runs))
	for _, res := range runs {
		row.Makespan += res.Makespan / n
		row.ExecP50 += sim.Median(res.Exec) / n
		row.JCTP50 += sim.Median(res.JCT) / n
		row.OverallocFrac += res.OverallocFrac / n
		row.BWUtil += res.BWUtil / n
	}
	for _, res := range runs {
		row.MakespanSD += (res.Makespan - row.Makespan) * (res.Makespan - row.Makespan) / n
	}
	row.MakespanSD = sim.Round(math.Sqrt(row.MakespanSD))
	row.Makespan = sim.Round(row.Makespan)
	row.ExecP50, row.JCTP50 = sim.Round(row.ExecP50), sim.Round(row.JCTP50)
	row.OverallocFrac, row.BWUtil = sim.Round(row.OverallocFrac), sim.Round(row.BWUtil)
	return row
}
