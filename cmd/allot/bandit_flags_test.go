package main

import (
	"bytes"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/allocator/policy/bandit"
	"github.com/allot-sched/allot/sorter"
)

func TestBanditFlags(t *testing.T) {
	cases := []struct {
		args []string
		want bandit.Config
		bad  bool
	}{
		{nil, bandit.Config{Step: sorter.DefaultBanditStep, Window: bandit.DefaultWindow, WaitScale: bandit.DefaultWaitScale}, false},
		{[]string{"-bandit-step", "0", "-bandit-window", "3", "-bandit-baseline", "global", "-bandit-wait-scale", "-1s"},
			bandit.Config{Window: 3, Scope: sorter.BaselineGlobal, WaitScale: -time.Second}, false},
		{[]string{"-bandit-baseline", "pair"}, bandit.Config{}, true},
		{[]string{"-bandit-window", "0"}, bandit.Config{}, true},
		{[]string{"-bandit-step", "-0.1"}, bandit.Config{}, true},
	}
	for _, c := range cases {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := banditFlags{warn: io.Discard}
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

// TestPolicyOptFlag: --policy-opt sets what the deprecated --bandit-*
// flags set, a deprecated flag says so, and an unknown key or policy is a
// usage error that names it.
func TestPolicyOptFlag(t *testing.T) {
	parse := func(args ...string) (bandit.Config, string, error) {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var warn bytes.Buffer
		f := banditFlags{warn: &warn}
		addBanditFlags(fs, &f)
		if err := fs.Parse(args); err != nil {
			return bandit.Config{}, warn.String(), err
		}
		c, err := f.config()
		return c, warn.String(), err
	}
	byOpt, warn, err := parse("--policy-opt", "bandit.step=0", "--policy-opt", "bandit.window=3", "--policy-opt", "bandit.baseline=global",
		"--policy-opt", "bandit.wait-scale=-1s", "--policy-opt", "bandit.chunk=3")
	if err != nil || warn != "" {
		t.Fatalf("--policy-opt: %v, warned %q", err, warn)
	}
	byFlag, warn, err := parse("--bandit-step", "0", "--bandit-window", "3", "--bandit-baseline", "global", "--bandit-wait-scale", "-1s", "--bandit-chunk", "3")
	if err != nil || byFlag != byOpt {
		t.Fatalf("deprecated flags: %+v, %v; --policy-opt gave %+v", byFlag, err, byOpt)
	}
	if !strings.Contains(warn, "--bandit-step is deprecated; use --policy-opt bandit.step=0") {
		t.Errorf("deprecated flag warned %q", warn)
	}
	for _, c := range []struct{ arg, want string }{
		{"bandit.stepp=1", `bandit.stepp: unknown option of policy bandit`},
		{"prophet.eta=1", `unknown policy "prophet"`},
		{"bandit.window=x", "bandit.window=x: want an integer"},
		{"step=1", "want policy.key=value"},
	} {
		if _, _, err := parse("--policy-opt", c.arg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--policy-opt %s: %v, want an error about %q", c.arg, err, c.want)
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
