package main

import (
	"fmt"
	"io"
	"sort"
)

// experiment is one `allot experiment NAME` reproduction.
type experiment struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

var experiments = map[string]experiment{}

// registerExperiment adds an experiment; call it from an init in the file
// that implements it.
func registerExperiment(e experiment) { experiments[e.name] = e }

func init() {
	register(command{
		name:    "experiment",
		summary: "reproduce a paper's experiment through the real allocator",
		run:     runExperiment,
	})
}

func runExperiment(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "Usage: allot experiment NAME [flags]\n\nExperiments:")
		names := make([]string, 0, len(experiments))
		for n := range experiments {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(stderr, "  %-16s %s\n", n, experiments[n].summary)
		}
		if len(args) == 0 {
			return usagef("name an experiment")
		}
		return nil
	}
	e, ok := experiments[args[0]]
	if !ok {
		names := make([]string, 0, len(experiments))
		for n := range experiments {
			names = append(names, n)
		}
		sort.Strings(names)
		return usagef("unknown experiment %q (have: %v)", args[0], names)
	}
	return e.run(args[1:], stdout, stderr)
}
