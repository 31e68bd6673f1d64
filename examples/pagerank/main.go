// Command pagerank runs Spark's classic PageRank over an edge list ("src dst"
// lines), the links cached, and prints node<TAB>rank sorted by node.
//
//	go run ./examples/pagerank --master 127.0.0.1:5050 --input edges.txt --iterations 10
//	go run ./examples/pagerank --generate 10000 --input edges.txt   # a seeded random graph
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

func init() { gen.RegisterPageRank() }

func main() {
	framework.Main()
	fs := flag.NewFlagSet("pagerank", flag.ExitOnError)
	var f exampleutil.Flags
	f.Register(fs)
	input := fs.String("input", "", "edge file (required)")
	iters := fs.Int("iterations", 10, "iterations")
	parts := fs.Int("partitions", 4, "partitions")
	generate := fs.Int("generate", 0, "write a seeded random graph of this many nodes to --input and exit")
	fs.Parse(os.Args[1:])
	if *input == "" {
		fmt.Fprintln(os.Stderr, "error: --input FILE is required")
		os.Exit(2)
	}
	if *generate > 0 {
		if err := gen.WriteGraph(*input, *generate, 1); err != nil {
			exampleutil.Exit(nil, err)
		}
		return
	}
	ctx, err := f.Context("pagerank")
	if err != nil {
		exampleutil.Exit(nil, err)
	}
	ranks, err := gen.PageRank(ctx, *input, *iters, *parts)
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
