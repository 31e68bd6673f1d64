// Command wordcount counts words in a text file on allot (or --local) and
// prints word<TAB>count lines sorted by word.
//
//	go run ./examples/wordcount --master 127.0.0.1:5050 --input FILE
//	go run ./examples/wordcount --local --input FILE
//	go run ./examples/wordcount --generate 100000000 --input /tmp/words.txt   # write ~100 MB of input
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/allot-sched/allot/examples/internal/exampleutil"
	"github.com/allot-sched/allot/examples/internal/gen"
	"github.com/allot-sched/allot/framework"
)

func init() { gen.RegisterWordCount() }

func main() {
	framework.Main()
	fs := flag.NewFlagSet("wordcount", flag.ExitOnError)
	var f exampleutil.Flags
	f.Register(fs)
	input := fs.String("input", "", "text file to count (required)")
	generate := fs.Int64("generate", 0, "write about this many bytes of generated text to --input and exit")
	parts := fs.Int("partitions", 0, "input partitions (0: one per 32 MB, at least the total cores)")
	fs.Parse(os.Args[1:])
	if *input == "" {
		fmt.Fprintln(os.Stderr, "error: --input FILE is required")
		os.Exit(2)
	}
	if *generate > 0 {
		if err := gen.WriteText(*input, *generate, 1); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
		return
	}
	ctx, err := f.Context("wordcount")
	if err != nil {
		exampleutil.Exit(nil, err)
	}
	counts, err := gen.WordCount(ctx, *input, *parts)
	if err == nil {
		w := bufio.NewWriter(os.Stdout)
		for _, kv := range counts {
			fmt.Fprintf(w, "%s\t%d\n", kv.Key, kv.Value)
		}
		err = w.Flush()
	}
	exampleutil.Exit(ctx, err)
}
