// Command testapp is an application for the cluster tests whose phases the
// tests can watch and pace. It runs a job of --tasks slow tasks (each holds
// its slot --task-ms, as a busy task would, so a backlog builds up); with
// --cache it first caches a one-partition dataset on its first executor,
// and after the slow job waits until dynamic allocation has released every
// executor it can (--min-executors) before reading the cached data again;
// with --hold FILE it waits for FILE to exist before its last phase, so a
// test can inspect the cluster while the application is still alive.
//
// On stderr it says "cached on EXEC", "slow job done", "idle with N
// executors" and "released"; on stdout it prints the counts.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/allot-sched/allot/examples/internal/exampleutil"
	"github.com/allot-sched/allot/framework"
)

func init() {
	framework.Register("testapp.slow", func(arg any) framework.MapFunc {
		d := time.Duration(arg.(int64)) * time.Millisecond
		return func(x any) any {
			// Holding the slot is what matters to the driver's backlog, and
			// sleeping does it without taking a core from the shared machine.
			time.Sleep(d)
			return x
		}
	})
}

func main() {
	framework.Main()
	fs := flag.NewFlagSet("testapp", flag.ExitOnError)
	var f exampleutil.Flags
	f.Register(fs)
	tasks := fs.Int("tasks", 8, "slow tasks in the job")
	taskMS := fs.Int("task-ms", 200, "how long each slow task holds its slot, ms")
	cache := fs.Bool("cache", false, "cache a dataset on the first executor and, after the slow job, wait for idle executors to be released")
	hold := fs.String("hold", "", "wait for this file to exist before the last phase")
	wait := fs.Duration("wait", 60*time.Second, "give up waiting (for --hold or for idle executors to go) after this long")
	fs.Parse(os.Args[1:])
	ctx, err := f.Context("testapp")
	if err != nil {
		exampleutil.Exit(nil, err)
	}
	exampleutil.Exit(ctx, run(ctx, *tasks, *taskMS, *cache, *hold, *wait, f.MinExecutors))
}

func run(ctx *framework.Context, tasks, taskMS int, cache bool, hold string, wait time.Duration, minExecs int) error {
	var cached *framework.Dataset
	if cache {
		cached = ctx.Range(1000, 1).Cache()
		n, err := cached.Count()
		if err != nil {
			return err
		}
		fmt.Println("cached", n)
		for id := range ctx.Executors() {
			fmt.Fprintf(os.Stderr, "cached on %s\n", id)
		}
	}
	n, err := ctx.Range(int64(tasks), tasks).Map("testapp.slow", int64(taskMS)).Count()
	if err != nil {
		return err
	}
	fmt.Println("slow", n)
	fmt.Fprintf(os.Stderr, "slow job done with %d executors\n", len(ctx.Executors()))
	if cache {
		minExecs = max(minExecs, 1)
		if err := until(wait, func() bool { return len(ctx.Executors()) <= minExecs }); err != nil {
			return fmt.Errorf("executors were not released when idle: still %d: %w", len(ctx.Executors()), err)
		}
		fmt.Fprintf(os.Stderr, "idle with %d executors\n", len(ctx.Executors()))
	}
	if hold != "" {
		if err := until(wait, func() bool { _, err := os.Stat(hold); return err == nil }); err != nil {
			return fmt.Errorf("waiting for %s: %w", hold, err)
		}
		fmt.Fprintln(os.Stderr, "released")
	}
	if cache {
		n, err := cached.Count()
		if err != nil {
			return err
		}
		fmt.Println("cached", n)
	}
	return nil
}

// until polls cond (the application's own pacing, not a test's).
func until(timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v", timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
