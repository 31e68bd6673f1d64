package psdsf

import (
	"fmt"
	"io"
	"math"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/plot"
	"github.com/allot-sched/allot/sim/report"
	"github.com/allot-sched/allot/sim/trace"
	"github.com/allot-sched/allot/sorter"
)

// The psdsf-online experiment: section 3 of Shan et al., "Online
// Scheduling of Spark Workloads with Mesos using Different Fair Allocation
// Algorithms", in simulation. Pi and WordCount queues (OnlineJobs) run on
// the paper's heterogeneous six agents and on the homogeneous variant, in
// oblivious and characterized modes, under DRF, PS-DSF, TSF, rPS-DSF (all
// with RRR agent selection, as the paper ran them) and BF-DRF (DRF with
// best-fit agent selection). Each configuration runs Trials times with
// seeds Seed, Seed+1, ...: the seed drives both the job durations'
// jitter and the allocator's shuffles, as repeated trials of the real
// experiment vary both.

// OnlinePolicies are the paper's schedulers, in its order.
var OnlinePolicies = []sim.Policy{
	{Name: "DRF", Sorter: sorter.DRF{}, Selection: sorter.RRR},
	{Name: "PS-DSF", Sorter: sorter.PSDSF{}, Selection: sorter.RRR},
	{Name: "TSF", Sorter: sorter.TSF{}, Selection: sorter.RRR},
	{Name: "BF-DRF", Sorter: sorter.DRF{}, Selection: sorter.BestFit},
	{Name: "rPS-DSF", Sorter: sorter.RPSDSF{}, Selection: sorter.RRR},
}

// OnlineClusters are the two clusters of the experiment.
var OnlineClusters = []string{"heterogeneous", "homogeneous"}

// OnlineOptions parameterise the experiment.
type OnlineOptions struct {
	Spec   sim.OnlineSpec // the workload; its Seed is replaced per trial
	Trials int            // default 5
	Seed   uint64
	// Progress, if set, is told after each run (done, total runs).
	Progress func(done, total int)
}

// OnlineCell is one configuration's runs.
type OnlineCell struct {
	Cluster string        `json:"cluster"`
	Mode    string        `json:"mode"`
	Policy  string        `json:"policy"`
	Runs    []*sim.Result `json:"-"`
	// Means and sample standard deviations over the trials.
	Makespan   float64 `json:"makespan_s"`
	MakespanSD float64 `json:"makespan_sd_s"`
	UtilCPU    float64 `json:"util_cpus"`
	UtilMem    float64 `json:"util_mem"`
	Jain       float64 `json:"jain"`
	JCTMean    float64 `json:"jct_mean_s"`
	Ratio      float64 `json:"lower_bound_ratio"`
}

// OnlineClaim is one of the paper's findings and whether we see it.
type OnlineClaim struct {
	Claim    string `json:"claim"`
	Evidence string `json:"evidence"`
	Seen     bool   `json:"seen"`
	// ByConstruction says why a finding cannot fail in this simulator, so
	// that "seen" is not read as evidence for the paper; "" where the runs
	// could have shown otherwise.
	ByConstruction string `json:"by_construction,omitempty"`
}

// homogeneousByConstruction is why DRF and PS-DSF match on identical
// servers: PS-DSF's share on a server is DRF's dominant share scaled by
// the server's capacity, the same constant for every framework when the
// servers are alike, so both order frameworks (and break ties) alike and
// make the same decisions run for run.
const homogeneousByConstruction = "holds by construction: on identical servers PS-DSF's per-server share is DRF's share times one constant, so the two make the same decisions run for run"

// OnlineReport is the experiment's outcome.
type OnlineReport struct {
	Trials int            `json:"trials"`
	Seed   uint64         `json:"seed"`
	Spec   sim.OnlineSpec `json:"spec"`
	Cells  []*OnlineCell  `json:"cells"`
	Claims []OnlineClaim  `json:"claims"`
}

// Cell finds a configuration's cell.
func (r *OnlineReport) Cell(cluster string, mode allocator.Mode, policy string) *OnlineCell {
	for _, c := range r.Cells {
		if c.Cluster == cluster && c.Mode == mode.String() && c.Policy == policy {
			return c
		}
	}
	return nil
}

// RunOnline runs every configuration.
func RunOnline(opt OnlineOptions) (*OnlineReport, error) {
	if opt.Trials <= 0 {
		opt.Trials = 5
	}
	opt.Spec.Defaults()
	rep := &OnlineReport{Trials: opt.Trials, Seed: opt.Seed, Spec: opt.Spec}
	clusters := map[string][]sim.Node{}
	for _, name := range OnlineClusters {
		preset := "psdsf-hetero"
		if name == "homogeneous" {
			preset = "psdsf-homo"
		}
		nodes, err := trace.ParseCluster(preset)
		if err != nil {
			return nil, err
		}
		clusters[name] = nodes
	}
	total := len(OnlineClusters) * 2 * len(OnlinePolicies) * opt.Trials
	done := 0
	for _, cl := range OnlineClusters {
		for _, m := range []allocator.Mode{allocator.Oblivious, allocator.Characterized} {
			for _, p := range OnlinePolicies {
				cell := &OnlineCell{Cluster: cl, Mode: m.String(), Policy: p.Name}
				for t := 0; t < opt.Trials; t++ {
					seed := opt.Seed + uint64(t)
					spec := opt.Spec
					spec.Seed = seed
					w := &sim.Workload{Name: "psdsf-online " + cl, Jobs: sim.OnlineJobs(spec), Nodes: clusters[cl]}
					r, err := sim.Run(w, sim.Config{Policy: p, Mode: m, Seed: seed})
					if err != nil {
						return nil, fmt.Errorf("%s %s %s trial %d: %w", cl, m, p.Name, t+1, err)
					}
					cell.Runs = append(cell.Runs, r)
					if done++; opt.Progress != nil {
						opt.Progress(done, total)
					}
				}
				cell.summarise()
				rep.Cells = append(rep.Cells, cell)
			}
		}
	}
	rep.judge()
	return rep, nil
}

func (c *OnlineCell) summarise() {
	var ms, cpu, mem, jain, jct, ratio []float64
	for _, r := range c.Runs {
		ms = append(ms, r.Makespan)
		cpu = append(cpu, r.Utilization["cpus"])
		mem = append(mem, r.Utilization["mem"])
		jain = append(jain, r.Jain)
		jct = append(jct, r.JCTMean)
		ratio = append(ratio, r.LowerBoundRatio)
	}
	c.Makespan, c.MakespanSD = sim.Round(sim.Mean(ms)), sim.Round(sim.StdDev(ms))
	c.UtilCPU, c.UtilMem, c.Jain = sim.Round(sim.Mean(cpu)), sim.Round(sim.Mean(mem)), sim.Round(sim.Mean(jain))
	c.JCTMean, c.Ratio = sim.Round(sim.Mean(jct)), sim.Round(sim.Mean(ratio))
}

// wins counts the trials in which a finished sooner than b (same seeds).
func wins(a, b *OnlineCell) int {
	n := 0
	for i := range a.Runs {
		if i < len(b.Runs) && a.Runs[i].Makespan < b.Runs[i].Makespan {
			n++
		}
	}
	return n
}

func pct(a, b float64) float64 { return 100 * (a - b) / b }

// judge states the paper's findings and whether the runs show them. A
// finding counts as seen when the mean makespans differ in the paper's
// direction and the ordering holds in most trials; "equal" means within
// 2 % on average.
func (r *OnlineReport) judge() {
	het, hom := "heterogeneous", "homogeneous"
	obl, chz := allocator.Oblivious, allocator.Characterized
	n := r.Trials
	for _, m := range []allocator.Mode{obl, chz} {
		drf, ps := r.Cell(het, m, "DRF"), r.Cell(het, m, "PS-DSF")
		w := wins(ps, drf)
		r.Claims = append(r.Claims, OnlineClaim{
			Claim: fmt.Sprintf("heterogeneous, %s: PS-DSF packs better and finishes sooner than DRF", m),
			Evidence: fmt.Sprintf("makespan PS-DSF %.0f s vs DRF %.0f s (%+.1f %%), sooner in %d/%d trials; cpu %.1f %% vs %.1f %%, mem %.1f %% vs %.1f %%",
				ps.Makespan, drf.Makespan, pct(ps.Makespan, drf.Makespan), w, n, 100*ps.UtilCPU, 100*drf.UtilCPU, 100*ps.UtilMem, 100*drf.UtilMem),
			Seen: ps.Makespan < drf.Makespan && 2*w > n,
		})
	}
	for _, p := range []string{"DRF", "PS-DSF"} {
		o, c := r.Cell(het, obl, p), r.Cell(het, chz, p)
		w := wins(c, o)
		r.Claims = append(r.Claims, OnlineClaim{
			Claim: fmt.Sprintf("heterogeneous, %s: characterized mode finishes sooner than oblivious", p),
			Evidence: fmt.Sprintf("makespan characterized %.0f s vs oblivious %.0f s (%+.1f %%), sooner in %d/%d trials",
				c.Makespan, o.Makespan, pct(c.Makespan, o.Makespan), w, n),
			Seen: c.Makespan < o.Makespan && 2*w > n,
		})
	}
	for _, m := range []allocator.Mode{chz, obl} {
		drf, ps := r.Cell(hom, m, "DRF"), r.Cell(hom, m, "PS-DSF")
		d := pct(ps.Makespan, drf.Makespan)
		r.Claims = append(r.Claims, OnlineClaim{
			Claim:          fmt.Sprintf("homogeneous, %s: DRF and PS-DSF perform nearly identically", m),
			Evidence:       fmt.Sprintf("makespan PS-DSF %.0f s vs DRF %.0f s (%+.1f %%)", ps.Makespan, drf.Makespan, d),
			Seen:           math.Abs(d) <= 2,
			ByConstruction: homogeneousByConstruction,
		})
	}
	ps, tsf, drf := r.Cell(het, chz, "PS-DSF"), r.Cell(het, chz, "TSF"), r.Cell(het, chz, "DRF")
	for _, p := range []string{"BF-DRF", "rPS-DSF"} {
		c := r.Cell(het, chz, p)
		r.Claims = append(r.Claims, OnlineClaim{
			Claim: fmt.Sprintf("heterogeneous, characterized: %s is comparable to PS-DSF and sooner than TSF", p),
			Evidence: fmt.Sprintf("makespan %s %.0f s, PS-DSF %.0f s (%+.1f %%), TSF %.0f s (%+.1f %%)",
				p, c.Makespan, ps.Makespan, pct(c.Makespan, ps.Makespan), tsf.Makespan, pct(c.Makespan, tsf.Makespan)),
			Seen: math.Abs(pct(c.Makespan, ps.Makespan)) <= 2 && c.Makespan < tsf.Makespan,
		})
	}
	r.Claims = append(r.Claims, OnlineClaim{
		Claim:    "heterogeneous, characterized: TSF is comparable to DRF",
		Evidence: fmt.Sprintf("makespan TSF %.0f s vs DRF %.0f s (%+.1f %%)", tsf.Makespan, drf.Makespan, pct(tsf.Makespan, drf.Makespan)),
		Seen:     math.Abs(pct(tsf.Makespan, drf.Makespan)) <= 2,
	})
}

// onlineFigure is one of the paper's figures, redrawn from the first
// trial: cpu (solid) and memory (dashed) in use over time.
type onlineFigure struct {
	file, title string
	cells       [][3]string // cluster, mode, policy
}

var onlineFigures = []onlineFigure{
	{"fig3_oblivious_drf_vs_psdsf.svg", "Fig. 3: DRF vs PS-DSF, oblivious, heterogeneous",
		[][3]string{{"heterogeneous", "oblivious", "DRF"}, {"heterogeneous", "oblivious", "PS-DSF"}}},
	{"fig4_characterized_drf_vs_psdsf.svg", "Fig. 4: DRF vs PS-DSF, characterized, heterogeneous",
		[][3]string{{"heterogeneous", "characterized", "DRF"}, {"heterogeneous", "characterized", "PS-DSF"}}},
	{"fig5_tsf_bfdrf_rpsdsf.svg", "Fig. 5: TSF, BF-DRF, rPS-DSF, characterized, heterogeneous",
		[][3]string{{"heterogeneous", "characterized", "TSF"}, {"heterogeneous", "characterized", "BF-DRF"}, {"heterogeneous", "characterized", "rPS-DSF"}}},
	{"fig6_drf_oblivious_vs_characterized.svg", "Fig. 6: oblivious vs characterized under DRF, heterogeneous",
		[][3]string{{"heterogeneous", "oblivious", "DRF"}, {"heterogeneous", "characterized", "DRF"}}},
	{"fig7_psdsf_oblivious_vs_characterized.svg", "Fig. 7: oblivious vs characterized under PS-DSF, heterogeneous",
		[][3]string{{"heterogeneous", "oblivious", "PS-DSF"}, {"heterogeneous", "characterized", "PS-DSF"}}},
	{"fig8_homogeneous_drf_vs_psdsf.svg", "Fig. 8: DRF vs PS-DSF, characterized, homogeneous",
		[][3]string{{"homogeneous", "characterized", "DRF"}, {"homogeneous", "characterized", "PS-DSF"}}},
}

// WriteOnlineOutputs writes the figures (SVG), the per-run summary and
// series (CSV) and an index.html into dir, and returns the paths.
func WriteOnlineOutputs(dir string, rep *OnlineReport) ([]string, error) {
	out, err := report.NewOutDir(dir)
	if err != nil {
		return nil, err
	}
	create := out.Create
	var figs []string
	for _, fg := range onlineFigures {
		ch := &plot.Chart{Title: fg.title + " (trial 1)", XLabel: "time (s)", YLabel: "allocated (% of cluster)", YMin: 0, YMax: 100}
		for i, k := range fg.cells {
			c := rep.Cell(k[0], mustMode(k[1]), k[2])
			if c == nil || len(c.Runs) == 0 {
				continue
			}
			r := c.Runs[0]
			color := plot.Palette[i%len(plot.Palette)]
			label := k[2]
			if fg.cells[0][1] != fg.cells[len(fg.cells)-1][1] {
				label += " " + k[1]
			}
			for _, res := range []string{"cpus", "mem"} {
				l := report.UtilizationChart([]*sim.Result{r}, res, "").Lines
				if len(l) == 0 {
					continue
				}
				l[0].Name = fmt.Sprintf("%s %s (%.0f s)", label, res, r.Makespan)
				l[0].Color, l[0].Dashed = color, res == "mem"
				ch.Lines = append(ch.Lines, l[0])
			}
		}
		ch.Width = 980
		if err := create(fg.file, ch.WriteSVG); err != nil {
			return out.Written, err
		}
		figs = append(figs, fg.file)
	}
	var all []*sim.Result
	for _, c := range rep.Cells {
		for _, r := range c.Runs {
			rr := *r
			rr.Policy = c.Cluster + " " + c.Policy
			all = append(all, &rr)
		}
	}
	kinds := report.UtilKinds(all)
	if err := create("summary.csv", func(w io.Writer) error { return report.WriteSummaryCSV(w, all, kinds) }); err != nil {
		return out.Written, err
	}
	if err := create("series.csv", func(w io.Writer) error { return report.WriteSeriesCSV(w, firstTrials(rep), kinds) }); err != nil {
		return out.Written, err
	}
	err = create("index.html", func(w io.Writer) error {
		fmt.Fprintln(w, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>psdsf-online</title></head><body style=\"font-family:sans-serif\">")
		fmt.Fprintln(w, "<h1>psdsf-online: the paper's Mesos experiment in simulation</h1><pre>")
		if err := WriteOnlineTable(&htmlEscaper{w}, rep); err != nil {
			return err
		}
		fmt.Fprintln(w, "</pre>")
		for _, f := range figs {
			fmt.Fprintf(w, "<p><img src=\"%s\" alt=\"%s\"></p>\n", f, f)
		}
		fmt.Fprintln(w, `<p>Data: <a href="summary.csv">summary.csv</a> (every run), <a href="series.csv">series.csv</a> (first trial of each configuration).</p></body></html>`)
		return nil
	})
	return out.Written, err
}

func firstTrials(rep *OnlineReport) []*sim.Result {
	var out []*sim.Result
	for _, c := range rep.Cells {
		if len(c.Runs) > 0 {
			r := *c.Runs[0]
			r.Policy = c.Cluster + " " + c.Policy
			out = append(out, &r)
		}
	}
	return out
}

func mustMode(s string) allocator.Mode {
	m, err := allocator.ParseMode(s)
	if err != nil {
		panic(err)
	}
	return m
}

// WriteOnlineTable prints the per-configuration means and the verdicts.
func WriteOnlineTable(w io.Writer, rep *OnlineReport) error {
	fmt.Fprintf(w, "psdsf-online: %d Pi + %d WordCount queues x %d jobs of %d executor tasks (~%.0f s), %d trial(s) from seed %d\n\n",
		rep.Spec.Queues, rep.Spec.Queues, rep.Spec.JobsPerQueue, rep.Spec.TasksPerJob, rep.Spec.TaskSeconds, rep.Trials, rep.Seed)
	fmt.Fprintf(w, "%-14s %-14s %-8s %12s %9s %9s %9s %7s %9s\n", "cluster", "mode", "policy", "makespan_s", "sd_s", "util_cpu", "util_mem", "jain", "lb_ratio")
	for _, c := range rep.Cells {
		fmt.Fprintf(w, "%-14s %-14s %-8s %12.1f %9.1f %8.1f%% %8.1f%% %7.3f %9.3f\n",
			c.Cluster, c.Mode, c.Policy, c.Makespan, c.MakespanSD, 100*c.UtilCPU, 100*c.UtilMem, c.Jain, c.Ratio)
	}
	fmt.Fprintln(w, "\nThe paper's findings:")
	for _, cl := range rep.Claims {
		mark := "NOT SEEN"
		if cl.Seen {
			mark = "seen    "
		}
		if _, err := fmt.Fprintf(w, "  [%s] %s\n             %s\n", mark, cl.Claim, cl.Evidence); err != nil {
			return err
		}
		if cl.ByConstruction != "" {
			if _, err := fmt.Fprintf(w, "             (%s)\n", cl.ByConstruction); err != nil {
				return err
			}
		}
	}
	return nil
}

// htmlEscaper escapes what it writes for an HTML <pre>.
type htmlEscaper struct{ w io.Writer }

func (h *htmlEscaper) Write(p []byte) (int, error) {
	var out []byte
	for _, c := range p {
		switch c {
		case '<':
			out = append(out, "&lt;"...)
		case '>':
			out = append(out, "&gt;"...)
		case '&':
			out = append(out, "&amp;"...)
		default:
			out = append(out, c)
		}
	}
	if _, err := h.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
