package profile

import (
	"math"
	"sort"
)

// Leave-one-setting-out cross-validation: how well the predictor does at a
// setting it never saw, measured on real event logs rather than on a
// synthetic family. Accuracy on held-out settings is the median per-stage
// error, the measure the paper reports ("mostly less than 10 %").
//
// For every run r, the model is trained on the application's other runs
// whose setting (cores, input bytes) differs from r's, so a recurring
// setting cannot answer for itself, and each of r's stages that the model
// knows is predicted at r's setting (the stage's own prediction, before
// Predict's repairs for overlaps, which move starts only when a regression
// misorders stages) and compared with what r measured.
//
// The error of a target is |predicted - measured| / max(measured, floor).
// The floors keep a near-zero measurement from making any prediction look
// infinitely wrong: OffsetFloor seconds for a start or end offset (a first
// stage starts a few milliseconds after launch), BandwidthFloor MiB/s for
// a peak (a stage that barely touches the disk). The paper gives no floor;
// these are small against the stages they guard (seconds long, tens of
// MiB/s) and say "within half a second" and "within 1 MiB/s" for the rest.

// OffsetFloor and BandwidthFloor are the error denominators' floors.
// LongStage is the measured duration from which a stage counts as long:
// the runtime samples usage once a second, so a shorter stage's peaks are
// whatever sample overlaps it (often its neighbour's), and AppEval reports
// the long stages apart.
const (
	OffsetFloor    = 0.5 // seconds
	BandwidthFloor = 1.0 // MiB/s
	LongStage      = 1.0 // seconds
)

// TargetNames are the four predicted quantities, in AppEval's order.
var TargetNames = [numTargets]string{"start", "end", "disk", "net"}

// AppEval is one application's cross-validation.
type AppEval struct {
	App       string              `json:"app"`
	Runs      int                 `json:"runs"`         // runs of the application in the logs
	Held      int                 `json:"held_out"`     // runs predicted from the others (those with a different setting to learn from)
	Stages    int                 `json:"stages"`       // stage observations compared
	Regressed int                 `json:"regressed"`    // of those, predicted by regression (the rest copied from the nearest setting)
	Median    [numTargets]float64 `json:"median_error"` // per target: start, end, disk, net
	All       float64             `json:"median_error_all"`
	Under10   float64             `json:"under_10pct"` // fraction of all errors below 10 %
	// The same over the stages that lasted at least LongStage.
	LongStages int                 `json:"long_stages"`
	LongMedian [numTargets]float64 `json:"long_median_error"`
	LongAll    float64             `json:"long_median_error_all"`
}

// CrossValidate runs the leave-one-setting-out cross-validation per
// application, in name order. Applications with a single setting are
// listed with Held 0.
func CrossValidate(runs []Run) []AppEval {
	byApp := map[string][]Run{}
	var apps []string
	for _, r := range runs {
		if len(r.Stages) == 0 {
			continue
		}
		if byApp[r.App] == nil {
			apps = append(apps, r.App)
		}
		byApp[r.App] = append(byApp[r.App], r)
	}
	sort.Strings(apps)
	out := make([]AppEval, 0, len(apps))
	for _, app := range apps {
		out = append(out, crossValidateApp(app, byApp[app]))
	}
	return out
}

func crossValidateApp(app string, runs []Run) AppEval {
	ev := AppEval{App: app, Runs: len(runs)}
	var errs, longErrs [numTargets][]float64
	var all, longAll []float64
	for i, r := range runs {
		var train []Run
		for j, o := range runs {
			if j != i && (o.Setting.Cores != r.Setting.Cores || o.Setting.InputBytes != r.Setting.InputBytes) {
				train = append(train, o)
			}
		}
		if len(train) == 0 {
			continue
		}
		a := Train(train).Apps[app]
		ev.Held++
		for _, sm := range a.Stages {
			got, ok := r.stage(sm.Key)
			if !ok {
				continue
			}
			p := a.predictStage(sm, r.Setting).targets()
			m := got.targets()
			ev.Stages++
			if sm.Coef != nil {
				ev.Regressed++
			}
			long := got.End-got.Start >= LongStage
			if long {
				ev.LongStages++
			}
			for t := range m {
				floor := OffsetFloor
				if t >= 2 {
					floor = BandwidthFloor
				}
				e := math.Abs(p[t]-m[t]) / math.Max(m[t], floor)
				errs[t] = append(errs[t], e)
				all = append(all, e)
				if long {
					longErrs[t] = append(longErrs[t], e)
					longAll = append(longAll, e)
				}
			}
		}
	}
	for t := range errs {
		ev.Median[t] = medianOf(errs[t])
		ev.LongMedian[t] = medianOf(longErrs[t])
	}
	ev.All, ev.LongAll = medianOf(all), medianOf(longAll)
	for _, e := range all {
		if e < 0.10 {
			ev.Under10++
		}
	}
	if len(all) > 0 {
		ev.Under10 /= float64(len(all))
	}
	return ev
}

// medianOf is the median (the upper one of an even count; 0 for none).
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
