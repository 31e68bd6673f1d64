package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/allot-sched/allot/lab/ispark"
)

// `allot experiment ispark` runs the iSpark paper's evaluation (Yang et
// al., Section IV) in the simulator's iterative-application model
// (sim/iterative.go): static and dynamic allocation against iSpark DF and
// CF, driven by framework/elastic's own policies and the allocator's
// inverse offers, beside the paper's figures.

func init() {
	registerExperiment(experiment{
		name:    "ispark",
		summary: "the iSpark paper's 120 PageRank/GBT/LDA applications on 8 workers: static, dynamic, iSpark DF and CF (+3 variants), gamma and h sweeps",
		run:     runISparkExperiment,
	})
}

func runISparkExperiment(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiment ispark", "[--seeds 1] [--apps 120] [--json] [--out DIR]",
		"The iSpark paper's setup (8 workers of 20 cores, 64 GB, 1 Gbps; executors of\n"+
			"1 core, 2 GB; 120 applications, PageRank/GBT/LDA 40/30/30 %, Poisson arrivals\n"+
			"of mean gap 5 s) in the simulator's iterative model, per policy averaged over\n"+
			"seeds 1..--seeds; gamma and h sweeps on PageRank alone, Fig. 12 on SVM alone.\n"+
			"About a minute of CPU per seed per run of 120 applications; 22 runs per seed.",
		stderr)
	seeds := fs.Int("seeds", 1, "seeds to average over (1..20)")
	apps := fs.Int("apps", ispark.ISparkApps, "applications per run (10..1000)")
	asJSON := fs.Bool("json", false, `print {"rows":[...],"sensitivity":{"gamma":[...],"h":[...]},...}`)
	out := fs.String("out", "", "also write ispark.json into DIR")
	fig12 := fs.Bool("fig12-only", false, "run only Fig. 12's eviction runs (SVM, 2/4/6 GB, dependency-aware and random), with per-seed lines")
	warm := fs.Bool("warm-givers", false, "Fig. 12 runs with the beyond-the-paper guard: no handoff of an executor that joined in the running iteration")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (ispark takes only flags)", fs.Arg(0))
	}
	if *seeds < 1 || *seeds > 20 {
		return usagef("--seeds must be between 1 and 20, got %d", *seeds)
	}
	if *apps < 10 || *apps > 1000 {
		return usagef("--apps must be between 10 and 1000, got %d", *apps)
	}
	rep, err := ispark.ISparkExperiment(ispark.ISparkOptions{Seeds: *seeds, Apps: *apps, EvictionOnly: *fig12, WarmGivers: *warm})
	if err != nil {
		return err
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(filepath.Join(*out, "ispark.json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(rep)
	}
	if *fig12 {
		printEviction(stdout, rep)
		return nil
	}
	printISpark(stdout, rep)
	return nil
}

func printISpark(w io.Writer, rep ispark.ISparkReport) {
	p := ispark.ISparkPaper
	fmt.Fprintf(w, "%d applications, seeds 1..%d\n", rep.Apps, rep.Seeds)
	fmt.Fprintf(w, "%-15s %8s %12s %9s %11s %10s %9s %8s %8s %8s\n", "policy", "cpu_util", "mkspan_p50_red", "jct_p50", "recomputed", "moved_GB", "failures", "pr_util", "gbt_util", "lda_util")
	row := map[string]ispark.ISparkRow{}
	for _, r := range rep.Rows {
		row[r.Policy] = r
		fmt.Fprintf(w, "%-15s %7.1f%% %13.1f%% %9.0f %11.0f %10.1f %8.2f%% %7.1f%% %7.1f%% %7.1f%%%s\n", r.Policy, 100*r.CPUUtil, 100*r.MakespanP50Reduction, r.JCTP50,
			r.Recomputed, r.MovedBytes/1e9, 100*r.TaskFailures, 100*r.AppUtil["pagerank"], 100*r.AppUtil["gbt"], 100*r.AppUtil["lda"], calibrationNote(r.Calibration))
	}
	dyn, df, cf := row[ispark.IterDynamic], row[ispark.IterISpark], row[ispark.IterISparkCF]
	fmt.Fprintf(w, "\nbeside the paper:\n")
	dynCal := ""
	if dyn.Calibrated {
		dynCal = fmt.Sprintf(" (calibrated to the paper's %.1f%%)", 100*p.CPUUtilDynamic)
	}
	fmt.Fprintf(w, "  cluster cpu (Fig. 8a): dynamic %.1f%%%s -> iSpark %.1f%% (paper %.1f%% -> %.1f%%)\n", 100*dyn.CPUUtil, dynCal, 100*df.CPUUtil, 100*p.CPUUtilDynamic, 100*p.CPUUtilISpark)
	fmt.Fprintf(w, "  median makespan reduction vs dynamic (Fig. 8b): %.1f%% (paper %.1f%%)\n", 100*df.MakespanP50Reduction, 100*p.MakespanReduction)
	if cf.JCTP50 > 0 {
		fmt.Fprintf(w, "  DF over CF, median JCT (Table II): %.1f%% shorter (paper ~%.1f%%)\n", 100*(1-df.JCTP50/cf.JCTP50), 100*p.DFoverCF)
	}
	fmt.Fprintf(w, "  LDA utilisation (Fig. 9a): static %.1f%%, dynamic %.1f%%, iSpark %.1f%% (paper %.1f / %.1f / %.1f%%)\n",
		100*row[ispark.IterStatic].AppUtil["lda"], 100*dyn.AppUtil["lda"], 100*df.AppUtil["lda"], 100*p.LDAStatic, 100*p.LDADynamic, 100*p.LDAISpark)
	nc := row[ispark.IterNoCache]
	fmt.Fprintf(w, "  preservation (Fig. 11): iSpark %.0f partitions recomputed, jct_p50 %.0f s; without the cache manager %.0f, %.0f s\n", df.Recomputed, df.JCTP50, nc.Recomputed, nc.JCTP50)
	for _, g := range rep.Sensitivity.Gamma {
		fmt.Fprintf(w, "  gamma %.1f (Fig. 10a, PageRank): utilisation gain over dynamic %+.0f%% (paper %+.0f%%)\n", g.Value, 100*g.UtilGain, 100*p.GammaGain[g.Value])
	}
	for _, h := range rep.Sensitivity.H {
		fmt.Fprintf(w, "  h %.1f (Fig. 10b-d, PageRank): task failures %.2f%%, jct_p50 / jct_p50(h=1) %.3f, utilisation gain %+.0f%%\n", h.Value, 100*h.TaskFailures, h.JCTRatio, 100*h.UtilGain)
	}
	printEvictionLines(w, rep, false)
}

// printEviction is `--fig12-only`: Fig. 12's points with their seeds.
func printEviction(w io.Writer, rep ispark.ISparkReport) {
	fmt.Fprintf(w, "%d SVM applications, seeds 1..%d, Fig. 12 only\n", rep.Apps, rep.Seeds)
	printEvictionLines(w, rep, true)
}

func printEvictionLines(w io.Writer, rep ispark.ISparkReport, perSeed bool) {
	p := ispark.ISparkPaper
	for _, e := range rep.Eviction {
		variant := ""
		if e.WarmGivers {
			variant = ", beyond the paper: no young givers"
		}
		fmt.Fprintf(w, "  cache hit ratio, %.0f MB executors (Fig. 12, SVM%s): dependency-aware %.1f%%, random %.1f%%; jct_p50 %.0f vs %.0f s (%.1f%% shorter)\n",
			e.MemMB, variant, 100*e.DAGAware, 100*e.Plain, e.DAGAwareJCT, e.PlainJCT, 100*(1-e.DAGAwareJCT/max(e.PlainJCT, 1e-9)))
		for _, r := range e.Runs {
			if perSeed {
				fmt.Fprintf(w, "    seed %d: %.1f%% vs %.1f%%, jct_p50 %.0f vs %.0f s, givers %d vs %d (young %d vs %d, empty %d vs %d)\n",
					r.Seed, 100*r.DAGAware, 100*r.Plain, r.DAGAwareJCT, r.PlainJCT, r.DAGAwareGivers, r.PlainGivers,
					r.DAGAwareYoungGivers, r.PlainYoungGivers, r.DAGAwareEmptyGivers, r.PlainEmptyGivers)
			}
		}
	}
	fmt.Fprintf(w, "  (paper: 2 GB %.0f%% vs %.0f%%, jct %.1f%% shorter; 4 GB %.0f%% vs %.0f%%; 6 GB about equal)\n",
		100*p.HitDAG, 100*p.HitPlain, 100*p.EvictJCTReduction, 100*p.HitDAG4G, 100*p.HitPlain4G)
}

// calibrationNote is what a table row carries after its figures when one
// of them was fitted to the paper's (the row's "calibration"), so that the
// text says what the JSON says; "" for a row that is only simulated.
func calibrationNote(calibration string) string {
	if calibration == "" {
		return ""
	}
	return "  [" + calibration + "]"
}
