package profile

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	pf "github.com/allot-sched/allot/profile"
)

// MinRuns is the number of runs of a stage, at distinct settings, below
// which a stage is not regressed but copied from the nearest observed
// setting: five coefficients, and two runs of slack so a fit through five
// points is not taken for a model.
const MinRuns = 7

// MinStage is the shortest predicted stage: a profile's stage must last.
const MinStage = time.Millisecond

// Setting is what an application run is configured with.
type Setting struct {
	Cores      int   `json:"cores"`       // per executor
	InputBytes int64 `json:"input_bytes"` // declared or read input
	Executors  int   `json:"executors"`
	MemMB      int   `json:"mem_mb"` // per executor
}

// StageObs is one stage of one run, aggregated over its executors.
type StageObs struct {
	Key    string  `json:"key"`
	Start  float64 `json:"start_s"` // mean offset from executor launch
	End    float64 `json:"end_s"`
	DiskBW float64 `json:"disk_mibps"` // max over executors of the stage's peak
	NetBW  float64 `json:"net_mibps"`
}

// Run is one earlier run of an application: its setting and stages.
type Run struct {
	App     string     `json:"app"`
	Setting Setting    `json:"setting"`
	Stages  []StageObs `json:"stages"`
}

// targets are the four predicted quantities, in this order.
const numTargets = 4

func (s StageObs) targets() [numTargets]float64 {
	return [numTargets]float64{s.Start, s.End, s.DiskBW, s.NetBW}
}

// features is the regression's x for a setting (see the package doc).
func features(st Setting) []float64 {
	g := float64(max(st.InputBytes, 0)) / (1 << 30)
	c := float64(max(st.Cores, 1))
	return []float64{1, g, 1 / c, g / c, c}
}

func logInput(b int64) float64 { return math.Log1p(float64(max(b, 0)) / (1 << 20)) }

// StageModel is one stage's fit: Coef[t] are target t's coefficients over
// features, nil when the stage falls back to the nearest setting.
type StageModel struct {
	Key  string                 `json:"key"`
	Coef *[numTargets][]float64 `json:"coef,omitempty"`
	Runs int                    `json:"runs"` // runs the stage was observed in
}

// AppModel is what the model knows of one application.
type AppModel struct {
	Stages []StageModel `json:"stages"`
	Runs   []Run        `json:"runs"` // the observations, for fallback and refits
}

// Model is the trained predictor: per application name.
type Model struct {
	Apps map[string]*AppModel `json:"apps"`
}

// Train fits a model from runs (any order; runs of unknown applications
// and runs without stage keys are kept only if they have stages).
func Train(runs []Run) *Model {
	m := &Model{Apps: map[string]*AppModel{}}
	for _, r := range runs {
		if len(r.Stages) == 0 {
			continue
		}
		a := m.Apps[r.App]
		if a == nil {
			a = &AppModel{}
			m.Apps[r.App] = a
		}
		a.Runs = append(a.Runs, r)
	}
	for _, a := range m.Apps {
		a.fit()
	}
	return m
}

// fit builds one StageModel per key seen in the app's runs.
func (a *AppModel) fit() {
	byKey := map[string][]int{} // key -> indexes into a.Runs
	var keys []string
	for i, r := range a.Runs {
		for _, s := range r.Stages {
			if byKey[s.Key] == nil {
				keys = append(keys, s.Key)
			}
			byKey[s.Key] = append(byKey[s.Key], i)
		}
	}
	sort.Strings(keys)
	a.Stages = a.Stages[:0]
	for _, k := range keys {
		sm := StageModel{Key: k, Runs: len(byKey[k])}
		var xs [][]float64
		var ys [numTargets][]float64
		settings := map[Setting]bool{}
		for _, i := range byKey[k] {
			s, _ := a.Runs[i].stage(k)
			xs = append(xs, features(a.Runs[i].Setting))
			for t, v := range s.targets() {
				ys[t] = append(ys[t], v)
			}
			settings[Setting{Cores: a.Runs[i].Setting.Cores, InputBytes: a.Runs[i].Setting.InputBytes}] = true
		}
		if len(settings) >= MinRuns {
			var coef [numTargets][]float64
			ok := true
			for t := range coef {
				if coef[t], ok = leastSquares(xs, ys[t]); !ok {
					break
				}
			}
			if ok {
				sm.Coef = &coef
			}
		}
		a.Stages = append(a.Stages, sm)
	}
}

func (r *Run) stage(key string) (StageObs, bool) {
	for _, s := range r.Stages {
		if s.Key == key {
			return s, true
		}
	}
	return StageObs{}, false
}

// Predict returns the application's predicted demand at st: E executors of
// st.Cores cpus and st.MemMB memory (each defaulting to the nearest run's
// when zero), and the profile, validated.
func (m *Model) Predict(app string, st Setting) (*pf.AppDemand, error) {
	a := m.Apps[app]
	if a == nil || len(a.Runs) == 0 {
		return nil, fmt.Errorf("predict: no runs of application %q in the model", app)
	}
	near := a.Runs[nearest(a.Runs, st, "")]
	if st.Cores <= 0 {
		st.Cores = near.Setting.Cores
	}
	if st.Executors <= 0 {
		st.Executors = near.Setting.Executors
	}
	if st.MemMB <= 0 {
		st.MemMB = near.Setting.MemMB
	}
	stages := make([]StageObs, 0, len(a.Stages))
	for _, sm := range a.Stages {
		stages = append(stages, a.predictStage(sm, st))
	}
	d := &pf.AppDemand{Executors: st.Executors, Cpus: float64(st.Cores), Mem: float64(st.MemMB), Profile: toProfile(stages)}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("predict %s: %w", app, err)
	}
	return d, nil
}

// Fallback reports whether the stage with key is predicted from the nearest
// observed setting rather than regressed.
func (m *Model) Fallback(app, key string) bool {
	if a := m.Apps[app]; a != nil {
		for _, sm := range a.Stages {
			if sm.Key == key {
				return sm.Coef == nil
			}
		}
	}
	return true
}

func (a *AppModel) predictStage(sm StageModel, st Setting) StageObs {
	if sm.Coef == nil {
		i := nearest(a.Runs, st, sm.Key)
		s, _ := a.Runs[i].stage(sm.Key)
		return s
	}
	x := features(st)
	var v [numTargets]float64
	for t, c := range sm.Coef {
		for j := range x {
			v[t] += c[j] * x[j]
		}
		v[t] = math.Max(v[t], 0)
	}
	return StageObs{Key: sm.Key, Start: v[0], End: v[1], DiskBW: v[2], NetBW: v[3]}
}

// nearest is the index of the run closest to st among those that ran key
// ("" for any), the latest run winning ties (a setting that recurs is best
// described by its most recent run).
func nearest(runs []Run, st Setting, key string) int {
	best, bestD := -1, math.Inf(1)
	for i, r := range runs {
		if _, ok := r.stage(key); key != "" && !ok {
			continue
		}
		d := math.Abs(logInput(r.Setting.InputBytes)-logInput(st.InputBytes)) +
			math.Abs(math.Log2(float64(max(r.Setting.Cores, 1)))-math.Log2(float64(max(st.Cores, 1))))
		if st.Cores <= 0 {
			d = math.Abs(logInput(r.Setting.InputBytes) - logInput(st.InputBytes))
		}
		if d <= bestD {
			best, bestD = i, d
		}
	}
	return best
}

// toProfile orders predicted stages by start and repairs what a regression
// can break: overlaps and stages that do not last.
func toProfile(stages []StageObs) pf.Profile {
	sort.SliceStable(stages, func(i, j int) bool { return stages[i].Start < stages[j].Start })
	var p pf.Profile
	var prev time.Duration
	for _, s := range stages {
		start := max(seconds(s.Start), prev)
		end := max(seconds(s.End), start+MinStage)
		p.Stages = append(p.Stages, pf.Stage{Start: start, End: end, DiskBW: math.Min(s.DiskBW, pf.MaxBandwidth), NetBW: math.Min(s.NetBW, pf.MaxBandwidth)})
		prev = end
	}
	return p
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// Keys are the application's stage keys in predicted order at st, for
// display beside Predict's profile.
func (m *Model) Keys(app string, st Setting) []string {
	a := m.Apps[app]
	if a == nil {
		return nil
	}
	type ks struct {
		key   string
		start float64
	}
	var out []ks
	for _, sm := range a.Stages {
		out = append(out, ks{sm.Key, a.predictStage(sm, st).Start})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	keys := make([]string, len(out))
	for i, k := range out {
		keys[i] = k.key
	}
	return keys
}

// MarshalModel and UnmarshalModel are the model's JSON form.
func MarshalModel(m *Model) ([]byte, error) { return json.MarshalIndent(m, "", " ") }

// UnmarshalModel reads a model and checks it is usable.
func UnmarshalModel(b []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("predict model: %w", err)
	}
	for app, a := range m.Apps {
		if a == nil || len(a.Runs) == 0 {
			return nil, fmt.Errorf("predict model: application %q has no runs", app)
		}
		for _, sm := range a.Stages {
			if sm.Coef != nil {
				for _, c := range sm.Coef {
					if len(c) != len(features(Setting{})) {
						return nil, fmt.Errorf("predict model: %s stage %s: %d coefficients, want %d", app, sm.Key, len(c), len(features(Setting{})))
					}
				}
			}
		}
	}
	return &m, nil
}
