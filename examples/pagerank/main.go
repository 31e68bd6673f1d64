// Command pagerank runs Spark's classic PageRank over an edge list ("src dst"
// lines), the links cached, and prints node<TAB>rank sorted by node.
//
//	go run ./examples/pagerank --master 127.0.0.1:5050 --input edges.txt --iterations 10
//	go run ./examples/pagerank --generate 10000 --input edges.txt   # a seeded random graph
//
// With --tol it runs delta PageRank instead (GraphX's runUntilConvergence):
// only vertices whose rank changed by more than tol in the last iteration
// send, so each iteration's work shrinks as ranks converge; --iterations is
// then a cap, and each iteration's senders are logged on stderr.
//
//	go run ./examples/pagerank --generate 50000 --citations 0.05 --refs 30 --input cites.txt   # a citation graph
//	go run ./examples/pagerank --master 127.0.0.1:5050 --input cites.txt --tol 1e-13 --iterations 1000
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"sort"

	"github.com/allot-sched/allot/examples/internal/exampleutil"
	"github.com/allot-sched/allot/examples/internal/gen"
	"github.com/allot-sched/allot/framework"
)

func init() {
	gen.RegisterPageRank()
	gen.RegisterDeltaPageRank()
}

func main() {
	framework.Main()
	fs := flag.NewFlagSet("pagerank", flag.ExitOnError)
	var f exampleutil.Flags
	f.Register(fs)
	input := fs.String("input", "", "edge file (required)")
	iters := fs.Int("iterations", 10, "iterations")
	parts := fs.Int("partitions", 4, "partitions")
	generate := fs.Int("generate", 0, "write a seeded random graph of this many nodes to --input and exit")
	citations := fs.Float64("citations", 0, "with --generate: a citation graph instead, each paper citing --refs of the latest this fraction of the papers before it")
	refs := fs.Int("refs", 15, "with --citations: references per paper on average (half to one and a half times)")
	tol := fs.Float64("tol", 0, "delta PageRank: only vertices whose rank changed by more than this send; --iterations caps the iterations (0: the classic fixed-iteration PageRank)")
	fs.Parse(os.Args[1:])
	if *input == "" {
		fmt.Fprintln(os.Stderr, "error: --input FILE is required")
		os.Exit(2)
	}
	if *generate > 0 {
		write := gen.WriteGraph
		if *citations > 0 {
			write = func(path string, n int, seed int64) error {
				return gen.WriteCitationGraph(path, n, *citations, *refs, seed)
			}
		}
		if err := write(*input, *generate, 1); err != nil {
			exampleutil.Exit(nil, err)
		}
		return
	}
	ctx, err := f.Context("pagerank")
	if err != nil {
		exampleutil.Exit(nil, err)
	}
	var ranks map[int64]float64
	if *tol > 0 {
		ranks, err = gen.DeltaPageRank(ctx, *input, *tol, *iters, *parts, func(s gen.DeltaStep) {
			fmt.Fprintf(os.Stderr, "delta pagerank: iteration %d: %d senders, %d vertices updated\n", s.Iteration, s.Senders, s.Updated)
		})
	} else {
		ranks, err = gen.PageRank(ctx, *input, *iters, *parts)
	}
	nodes := make([]int64, 0, len(ranks))
	for n := range ranks {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i] < nodes[j] })
	w := bufio.NewWriter(os.Stdout)
	for _, n := range nodes {
		fmt.Fprintf(w, "%d\t%.12f\n", n, ranks[n])
	}
	w.Flush()
	exampleutil.Exit(ctx, err)
}
