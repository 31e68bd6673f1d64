package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/allot-sched/allot/sim/plot"
)

// WriteFSPYOutputs writes the fspy experiment's files into dir:
// report.json (the report, R^2 -1 when nothing was predicted),
// windows.csv (one row per window and policy), mean_rt.svg (mean response
// time by load group per policy, the paper's Figure 6) and jct_ecdf.svg
// (response-time ECDF in the heaviest group, its Figure 7). It returns
// the paths written.
func WriteFSPYOutputs(dir string, rep *FSPYReport, policies []string) ([]string, error) {
	out, err := makeOutDir(dir)
	if err != nil {
		return nil, err
	}
	create := out.create
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
			return out.written, err
		}
	}
	return out.written, nil
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

// fspyMeanRTChart: mean response time against the groups' mean load.
func fspyMeanRTChart(rep *FSPYReport, policies []string) *plot.Chart {
	ch := &plot.Chart{Title: rep.Trace + ": mean response time by load group", XLabel: "log2 offered load (group)", YLabel: "mean response time (s)"}
	for _, p := range policies {
		l := plot.Line{Name: p}
		for _, g := range rep.Groups {
			if v, ok := g.MeanRT[p]; ok {
				l.X, l.Y = append(l.X, float64(g.Level)), append(l.Y, v)
			}
		}
		ch.Lines = append(ch.Lines, l)
	}
	return ch
}

// fspyECDFChart: the response-time ECDF of the heaviest group.
func fspyECDFChart(rep *FSPYReport, policies []string) *plot.Chart {
	ch := &plot.Chart{Title: fmt.Sprintf("%s: ECDF of response times, load level %d", rep.Trace, rep.CommonLevel),
		XLabel: "response time (s)", YLabel: "fraction of jobs", YMin: 0, YMax: 1, Step: true}
	for _, p := range policies {
		l := plot.Line{Name: p}
		for _, pt := range rep.ECDF[p] {
			l.X, l.Y = append(l.X, pt.X), append(l.Y, pt.Y)
		}
		ch.Lines = append(ch.Lines, l)
	}
	return ch
}
