package fspy

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/allot-sched/allot/sim/plot"
	"github.com/allot-sched/allot/sim/report"
)

// WriteFSPYOutputs writes the fspy experiment's files into dir:
// report.json (the report, R^2 -1 when nothing was predicted),
// windows.csv (one row per window and policy), mean_rt.svg (mean response
// time by load group per policy, the paper's Figure 6) and jct_ecdf.svg
// (response-time ECDF in the heaviest group, its Figure 7). It returns
// the paths written.
func WriteFSPYOutputs(dir string, rep *FSPYReport, policies []string) ([]string, error) {
	out, err := report.NewOutDir(dir)
	if err != nil {
		return nil, err
	}
	create := out.Create
	steps := []struct {
		name string
		fill func(io.Writer) error
	}{
		{"report.json", func(w io.Writer) error {
			r := *rep
			if math.IsNaN(r.R2) {
				r.R2 = -1
			}
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			return enc.Encode(&r)
		}},
		{"windows.csv", func(w io.Writer) error { return writeFSPYWindowsCSV(w, rep) }},
		{"mean_rt.svg", fspyMeanRTChart(rep, policies).WriteSVG},
		{"jct_ecdf.svg", fspyECDFChart(rep, policies).WriteSVG},
	}
	for _, s := range steps {
		if err := create(s.name, s.fill); err != nil {
			return out.Written, err
		}
	}
	return out.Written, nil
}

func writeFSPYWindowsCSV(w io.Writer, rep *FSPYReport) error {
	if _, err := fmt.Fprintln(w, "window,seed,load,level,policy,mean_rt_s,p50_rt_s"); err != nil {
		return err
	}
	for _, x := range rep.Windows {
		if _, err := fmt.Fprintf(w, "%d,%d,%g,%d,%s,%g,%g\n", x.ID, x.Seed, x.Load, x.Level, x.Policy, x.MeanRT, x.P50RT); err != nil {
			return err
		}
	}
	return nil
}

// fspyMeanRTChart: mean response time against the groups' load level,
// both in log2: fifo's means are a hundred times fair's at heavy load, and
// on a linear axis they flatten every other line (the paper's Figure 6
// has fair and fspy only).
func fspyMeanRTChart(rep *FSPYReport, policies []string) *plot.Chart {
	ch := &plot.Chart{Title: rep.Trace + ": mean response time by load group", XLabel: "log2 offered load (group)", YLabel: "log2 mean response time (s)"}
	for _, p := range policies {
		l := plot.Line{Name: p}
		for _, g := range rep.Groups {
			if v, ok := g.MeanRT[p]; ok && v > 0 {
				l.X, l.Y = append(l.X, float64(g.Level)), append(l.Y, math.Log2(v))
			}
		}
		ch.Lines = append(ch.Lines, l)
	}
	return ch
}

// fspyECDFChart: the response-time ECDF of the heaviest group, over log2
// response time.
func fspyECDFChart(rep *FSPYReport, policies []string) *plot.Chart {
	ch := &plot.Chart{Title: fmt.Sprintf("%s: ECDF of response times, load level %d", rep.Trace, rep.CommonLevel),
		XLabel: "log2 response time (s)", YLabel: "fraction of jobs", YMin: 0, YMax: 1, Step: true}
	for _, p := range policies {
		l := plot.Line{Name: p}
		for _, pt := range rep.ECDF[p] {
			if pt.X > 0 { // response times span 10 s to hours: log2
				l.X, l.Y = append(l.X, math.Log2(pt.X)), append(l.Y, pt.Y)
			}
		}
		ch.Lines = append(ch.Lines, l)
	}
	return ch
}

// FSPYIssueJSON is the report in the shape its issue specifies, plus
// whether the model was calibrated:
// {"calibrated","calibration","windows":[{"id","load","policy","mean_rt_s","p50_rt_s"}],
// "groups":[{"load","fspy_over_fair"}],
// "fair_slowdown":{"le_1","le_1_5","max"},"r2"}. `allot experiment fspy
// --json` prints it; report.json under --out holds the whole FSPYReport.
type FSPYIssueJSON struct {
	// Calibrated and Calibration are the report's (FSPYCalibration): the
	// issue's shape plus what a reader needs to not take a figure shaped
	// by a miss against the paper for a reproduced one.
	Calibrated   bool              `json:"calibrated"`
	Calibration  string            `json:"calibration,omitempty"`
	Windows      []FSPYIssueWindow `json:"windows"`
	Groups       []FSPYIssueGroup  `json:"groups"`
	FairSlowdown FSPYIssueSlowdown `json:"fair_slowdown"`
	R2           float64           `json:"r2"` // -1 when nothing was predicted
}

// FSPYIssueWindow is one window under one policy.
type FSPYIssueWindow struct {
	ID     int     `json:"id"`
	Load   float64 `json:"load"`
	Policy string  `json:"policy"`
	MeanRT float64 `json:"mean_rt_s"`
	P50RT  float64 `json:"p50_rt_s"`
}

// FSPYIssueGroup is a load group: its windows' mean load and fspy's mean
// response time over fair's.
type FSPYIssueGroup struct {
	Load         float64 `json:"load"`
	FSPYOverFair float64 `json:"fspy_over_fair"`
}

// FSPYIssueSlowdown is fspy's fair slowdown over every window's jobs.
type FSPYIssueSlowdown struct {
	LE1   float64 `json:"le_1"`
	LE1p5 float64 `json:"le_1_5"`
	Max   float64 `json:"max"`
}

// IssueJSON returns the report in the issue's shape.
func (r *FSPYReport) IssueJSON() FSPYIssueJSON {
	out := FSPYIssueJSON{
		Calibrated:   r.Calibrated,
		Calibration:  r.Calibration,
		Windows:      make([]FSPYIssueWindow, 0, len(r.Windows)),
		Groups:       make([]FSPYIssueGroup, 0, len(r.Groups)),
		FairSlowdown: FSPYIssueSlowdown{LE1: r.FairSlowdown.LE1, LE1p5: r.FairSlowdown.LE1p5, Max: r.FairSlowdown.Max},
		R2:           r.R2,
	}
	if math.IsNaN(out.R2) {
		out.R2 = -1
	}
	for _, w := range r.Windows {
		out.Windows = append(out.Windows, FSPYIssueWindow{ID: w.ID, Load: w.Load, Policy: w.Policy, MeanRT: w.MeanRT, P50RT: w.P50RT})
	}
	for _, g := range r.Groups {
		out.Groups = append(out.Groups, FSPYIssueGroup{Load: g.Load, FSPYOverFair: g.FSPYOverFair})
	}
	return out
}
