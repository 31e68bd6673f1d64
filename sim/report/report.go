package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/plot"
	"github.com/allot-sched/allot/sim/trace"
)

// Report is the JSON document `allot sim --json` prints: one object with
// every run, in the order they ran.
type Report struct {
	// WhatIf, when the workload was reshaped (WhatIf.Apply), says how.
	WhatIf *trace.WhatIfReport `json:"what_if,omitempty"`
	Runs   []*sim.Result       `json:"runs"`
}

// WriteJSON writes the runs as one JSON object (two-space indented, a
// trailing newline). The same runs give the same bytes.
func WriteJSON(w io.Writer, runs []*sim.Result) error {
	return WriteReport(w, Report{Runs: runs})
}

// WriteReport writes the report as WriteJSON does.
func WriteReport(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// UtilKinds lists the utilisation keys present in any run, cpus and mem
// first.
func UtilKinds(runs []*sim.Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range []string{"cpus", "mem", "disk", "gpus", "disk_bw", "net_bw"} {
		for _, r := range runs {
			if _, ok := r.Utilization[k]; ok && !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// WriteTable prints the comparison table. wall, if not nil, gives each
// run's wall-clock seconds for a last column.
func WriteTable(w io.Writer, runs []*sim.Result, wall []float64) error {
	kinds := UtilKinds(runs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"policy", "selection", "mode", "makespan_s", "jct_p50_s", "jct_p90_s", "jct_p99_s", "mean_wait_s"}
	for _, k := range kinds {
		head = append(head, "util_"+k)
	}
	head = append(head, "jain", "share_gap", "lb_ratio")
	if wall != nil {
		head = append(head, "wall_s")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for i, r := range runs {
		row := []string{r.Policy, r.Selection, r.Mode, f1(r.Makespan), f1(r.JCTP50), f1(r.JCTP90), f1(r.JCTP99), f1(r.MeanWait)}
		for _, k := range kinds {
			if u, ok := r.Utilization[k]; ok {
				row = append(row, fmt.Sprintf("%.1f%%", 100*u))
			} else {
				row = append(row, "-")
			}
		}
		row = append(row, fmt.Sprintf("%.3f", r.Jain), fmt.Sprintf("%.3f", r.ShareGap), fmt.Sprintf("%.3f", r.LowerBoundRatio))
		if wall != nil && i < len(wall) {
			row = append(row, fmt.Sprintf("%.2f", wall[i]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if len(runs) > 0 {
		r := runs[0]
		fmt.Fprintf(tw, "\n")
		if err := tw.Flush(); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%d jobs, %d tasks; lower bound %.1f s (fluid work/capacity %.1f s); lb_ratio = makespan / lower bound\n",
			r.Jobs, r.Tasks, r.LowerBound, r.FluidBound); err != nil {
			return err
		}
		return writeRoles(w, runs, kinds)
	}
	return tw.Flush()
}

// writeRoles prints, for runs with a roles file, what each role got.
func writeRoles(w io.Writer, runs []*sim.Result, kinds []string) error {
	if len(runs) == 0 || runs[0].Roles == nil {
		return nil
	}
	fmt.Fprintln(w, "\nby role (share: mean fraction of the cluster its tasks held):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"policy", "mode", "role", "jobs", "jct_mean_s", "mean_wait_s"}
	for _, k := range kinds {
		if k != "disk_bw" && k != "net_bw" {
			head = append(head, "share_"+k)
		}
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range runs {
		for _, rs := range r.Roles {
			row := []string{r.Policy, r.Mode, rs.Role, strconv.Itoa(rs.Jobs), f1(rs.JCTMean), f1(rs.MeanWait)}
			for _, k := range head[6:] {
				row = append(row, fmt.Sprintf("%.1f%%", 100*rs.Share[strings.TrimPrefix(k, "share_")]))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
	}
	return tw.Flush()
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }

// WriteOutputs writes, into dir (created if needed), everything a person
// needs to look at the runs:
//
//   - summary.csv: one row per run (the table);
//   - series.csv: per run and time bucket, utilisation per resource, Jain's
//     index and the number of frameworks with unfinished jobs;
//   - jobs.csv: per run and job, arrival, first launch, finish and JCT;
//   - util_<resource>.svg: utilisation over time, one line per run;
//   - jct_cdf.svg: the CDF of job completion times, one line per run;
//   - index.html: the table and the figures on one page.
//
// It returns the paths written.
func WriteOutputs(dir, title string, runs []*sim.Result) ([]string, error) {
	out, err := NewOutDir(dir)
	if err != nil {
		return nil, err
	}
	write := out.Create
	kinds := UtilKinds(runs)
	if err := write("summary.csv", func(w io.Writer) error { return WriteSummaryCSV(w, runs, kinds) }); err != nil {
		return out.Written, err
	}
	if err := write("series.csv", func(w io.Writer) error { return WriteSeriesCSV(w, runs, kinds) }); err != nil {
		return out.Written, err
	}
	if err := write("jobs.csv", func(w io.Writer) error { return writeJobsCSV(w, runs) }); err != nil {
		return out.Written, err
	}
	var figs []string
	for _, k := range kinds {
		name := "util_" + k + ".svg"
		ch := UtilizationChart(runs, k, fmt.Sprintf("%s: %s utilisation over time", title, k))
		if err := write(name, ch.WriteSVG); err != nil {
			return out.Written, err
		}
		figs = append(figs, name)
	}
	ch := JCTChart(runs, title+": job completion time CDF")
	if err := write("jct_cdf.svg", ch.WriteSVG); err != nil {
		return out.Written, err
	}
	figs = append(figs, "jct_cdf.svg")
	err = write("index.html", func(w io.Writer) error {
		fmt.Fprintf(w, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head>\n<body style=\"font-family:sans-serif\">\n<h1>%s</h1>\n<pre>\n", html.EscapeString(title), html.EscapeString(title))
		var sb strings.Builder
		if err := WriteTable(&sb, runs, nil); err != nil {
			return err
		}
		fmt.Fprint(w, html.EscapeString(sb.String()))
		fmt.Fprintln(w, "</pre>")
		for _, f := range figs {
			fmt.Fprintf(w, "<p><img src=\"%s\" alt=\"%s\"></p>\n", f, f)
		}
		fmt.Fprintln(w, `<p>Data: <a href="summary.csv">summary.csv</a>, <a href="series.csv">series.csv</a>, <a href="jobs.csv">jobs.csv</a>.</p></body></html>`)
		return nil
	})
	return out.Written, err
}

func ff(x float64) string {
	if math.IsNaN(x) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', 8, 64)
}

func WriteSummaryCSV(w io.Writer, runs []*sim.Result, kinds []string) error {
	cw := csv.NewWriter(w)
	head := []string{"policy", "sorter", "agent_selection", "mode", "seed", "jobs", "tasks", "makespan_s", "jct_p50_s", "jct_p90_s", "jct_p99_s", "jct_mean_s", "mean_wait_s"}
	for _, k := range kinds {
		head = append(head, "util_"+k)
	}
	head = append(head, "jain", "share_gap", "fluid_bound_s", "lower_bound_s", "lower_bound_ratio", "cycles", "offers", "declines")
	cw.Write(head)
	for _, r := range runs {
		row := []string{r.Policy, r.Sorter, r.Selection, r.Mode, strconv.FormatUint(r.Seed, 10), strconv.Itoa(r.Jobs), strconv.FormatInt(r.Tasks, 10),
			ff(r.Makespan), ff(r.JCTP50), ff(r.JCTP90), ff(r.JCTP99), ff(r.JCTMean), ff(r.MeanWait)}
		for _, k := range kinds {
			row = append(row, ff(r.Utilization[k]))
		}
		row = append(row, ff(r.Jain), ff(r.ShareGap), ff(r.FluidBound), ff(r.LowerBound), ff(r.LowerBoundRatio),
			strconv.Itoa(r.Cycles), strconv.Itoa(r.Offers), strconv.Itoa(r.Declines))
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func WriteSeriesCSV(w io.Writer, runs []*sim.Result, kinds []string) error {
	cw := csv.NewWriter(w)
	head := append([]string{"policy", "mode", "t_s"}, kinds...)
	cw.Write(append(head, "jain", "frameworks"))
	for _, r := range runs {
		s := r.Series
		if s == nil {
			continue
		}
		col := map[string]int{}
		for i, k := range s.Kinds {
			col[k] = i
		}
		for i := range s.Util {
			row := []string{r.Policy, r.Mode, ff(float64(i) * s.Width)}
			for _, k := range kinds {
				if c, ok := col[k]; ok {
					row = append(row, ff(s.Util[i][c]))
				} else {
					row = append(row, "")
				}
			}
			cw.Write(append(row, ff(s.Jain[i]), strconv.Itoa(s.Frameworks[i])))
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeJobsCSV(w io.Writer, runs []*sim.Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"policy", "mode", "job_id", "framework", "tasks", "arrive_s", "start_s", "finish_s", "jct_s", "wait_s"})
	for _, r := range runs {
		for _, j := range r.JobStats {
			cw.Write([]string{r.Policy, r.Mode, j.ID, j.Framework, strconv.FormatInt(j.Tasks, 10),
				ff(j.Arrive), ff(j.Start), ff(j.Finish), ff(j.JCT()), ff(j.Start - j.Arrive)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// UtilizationChart plots resource kind's utilisation (in %) over time, a
// line per run.
func UtilizationChart(runs []*sim.Result, kind, title string) *plot.Chart {
	ch := &plot.Chart{Title: title, XLabel: "time (s)", YLabel: kind + " in use (%)", YMin: 0, YMax: 100}
	for _, r := range runs {
		s := r.Series
		if s == nil {
			continue
		}
		c := -1
		for i, k := range s.Kinds {
			if k == kind {
				c = i
			}
		}
		if c < 0 {
			continue
		}
		l := plot.Line{Name: r.Label()}
		for i := range s.Util {
			l.X = append(l.X, (float64(i)+0.5)*s.Width)
			l.Y = append(l.Y, 100*s.Util[i][c])
		}
		ch.Lines = append(ch.Lines, l)
	}
	return ch
}

// JCTChart plots the empirical CDF of job completion times, a line per run.
func JCTChart(runs []*sim.Result, title string) *plot.Chart {
	ch := &plot.Chart{Title: title, XLabel: "job completion time (s)", YLabel: "fraction of jobs", YMin: 0, YMax: 1, Step: true}
	for _, r := range runs {
		v := make([]float64, 0, len(r.JobStats))
		for _, j := range r.JobStats {
			v = append(v, j.JCT())
		}
		sort.Float64s(v)
		l := plot.Line{Name: r.Label()}
		for i, x := range v {
			l.X = append(l.X, x)
			l.Y = append(l.Y, float64(i+1)/float64(len(v)))
		}
		ch.Lines = append(ch.Lines, l)
	}
	return ch
}
