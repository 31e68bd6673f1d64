// Command allot is the single allot binary: `allot master`, `allot agent`,
// `allot dev`, `allot sim`, `allot experiment` and operator verbs. It is
// wiring only; every subcommand lives in its own file and registers itself
// in init, so adding one touches no other.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	// run executes the subcommand with its arguments (after the name).
	// Errors of kind usageError make the dispatcher exit 2.
	run func(args []string, stdout, stderr io.Writer) error
	// hidden keeps it out of the usage: only allot itself runs it.
	hidden bool
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// usageError marks bad invocations (exit status 2, as flag does).
type usageError struct {
	msg string
	// printed is set when the flag package already told the user.
	printed bool
}

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{msg: fmt.Sprintf(format, args...)} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = []string{"version"}
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintln(stderr, unknownCommand(args[0]))
		return 2
	}
	err := c.run(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	var ue usageError
	if errors.As(err, &ue) {
		if !ue.printed {
			fmt.Fprintf(stderr, "allot %s: %v\n", c.name, err)
		}
		return 2
	}
	fmt.Fprintf(stderr, "allot %s: %v\n", c.name, err)
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "allot: an offer-based cluster manager with pluggable fair allocators.")
	fmt.Fprintln(w, "\nUsage: allot <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'allot <command> --help' for the flags of a command.")
}

// newFlagSet returns a flag set that writes its help to stderr, prefixed by
// a usage line and a description, and that also reads every flag from an
// ALLOT_<NAME> environment variable (dashes become underscores) when the
// flag is not given on the command line.
func newFlagSet(name, usage, description string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("allot "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: allot %s %s\n\n%s\n\nFlags (each also from ALLOT_<FLAG> in the environment):\n", name, usage, description)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, then fills unset flags from the environment.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{msg: err.Error(), printed: true} // flag printed it and the usage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || err != nil {
			return
		}
		env := "ALLOT_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = usagef("%s=%q: %v", env, v, e)
			}
		}
	})
	return err
}

// isTerminal reports whether w is a terminal (a character device), where
// progress bars and colours help; in a file or a pipe they are noise.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
