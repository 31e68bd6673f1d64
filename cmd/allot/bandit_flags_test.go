package main

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/sorter"
)

func TestBanditFlags(t *testing.T) {
	cases := []struct {
		args []string
		want allocator.BanditConfig
		bad  bool
	}{
		{nil, allocator.BanditConfig{Step: sorter.DefaultBanditStep, Window: allocator.DefaultBanditWindow, WaitScale: allocator.DefaultBanditWaitScale}, false},
		{[]string{"-bandit-step", "0", "-bandit-window", "3", "-bandit-baseline", "global", "-bandit-wait-scale", "-1s"},
			allocator.BanditConfig{Window: 3, Scope: sorter.BaselineGlobal, WaitScale: -time.Second}, false},
		{[]string{"-bandit-baseline", "pair"}, allocator.BanditConfig{}, true},
		{[]string{"-bandit-window", "0"}, allocator.BanditConfig{}, true},
		{[]string{"-bandit-step", "-0.1"}, allocator.BanditConfig{}, true},
	}
	for _, c := range cases {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var f banditFlags
		addBanditFlags(fs, &f)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		got, err := f.config()
		if (err != nil) != c.bad {
			t.Errorf("%v: error %v, want error %v", c.args, err, c.bad)
			continue
		}
		if !c.bad && got != c.want {
			t.Errorf("%v: %+v, want %+v", c.args, got, c.want)
		}
	}
}

// TestExperimentColocation: the verb runs a small custom queue and prints
// every policy; bad flags are usage errors.
func TestExperimentColocation(t *testing.T) {
	var out, errb bytes.Buffer
	if err := runColocation([]string{"--queue", "KM*2,Q10*2 x2", "--seeds", "2"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	for _, want := range []string{"FIFO", "RA*", "random-in-window", "KM+Q10"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, bad := range [][]string{{"--seeds", "0"}, {"--queue", "XX*2"}, {"--bandit-baseline", "x"}} {
		if err := runColocation(bad, io.Discard, io.Discard); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
