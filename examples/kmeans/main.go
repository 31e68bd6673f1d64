// Command kmeans clusters points (one per line, space-separated
// coordinates) with Lloyd's algorithm from the first k points, the points
// cached on the executors, and prints the centres.
//
//	go run ./examples/kmeans --master 127.0.0.1:5050 --input points.txt --k 5
//	go run ./examples/kmeans --generate 100000 --input points.txt   # write 100,000 seeded points
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/examples/internal/exampleutil"
	"github.com/allot-sched/allot/examples/internal/gen"
	"github.com/allot-sched/allot/framework"
)

func init() { gen.RegisterKMeans() }

func main() {
	framework.Main()
	fs := flag.NewFlagSet("kmeans", flag.ExitOnError)
	var f exampleutil.Flags
	f.Register(fs)
	input := fs.String("input", "", "points file (required)")
	k := fs.Int("k", 5, "clusters")
	iters := fs.Int("iterations", 10, "Lloyd iterations")
	parts := fs.Int("partitions", 0, "input partitions")
	generate := fs.Int("generate", 0, "write this many seeded points (3-D, around k centres) to --input and exit")
	progress := fs.Bool("progress", false, "print 'iteration N' on stderr after each iteration")
	fs.Parse(os.Args[1:])
	if *input == "" {
		fmt.Fprintln(os.Stderr, "error: --input FILE is required")
		os.Exit(2)
	}
	if *generate > 0 {
		if err := gen.WritePoints(*input, *generate, 3, *k, 1); err != nil {
			exampleutil.Exit(nil, err)
		}
		return
	}
	ctx, err := f.Context("kmeans")
	if err != nil {
		exampleutil.Exit(nil, err)
	}
	centres, err := gen.KMeans(ctx, *input, *k, *iters, *parts, func(i int) {
		if *progress {
			fmt.Fprintf(os.Stderr, "iteration %d\n", i+1)
		}
	})
	for _, c := range centres {
		s := make([]string, len(c))
		for i, v := range c {
			s[i] = strconv.FormatFloat(v, 'f', 9, 64)
		}
		fmt.Println(strings.Join(s, " "))
	}
	exampleutil.Exit(ctx, err)
}
