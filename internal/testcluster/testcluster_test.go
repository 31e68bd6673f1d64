package testcluster

import (
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMetric(t *testing.T) {
	const body = `# HELP allot_master_offers_total offers made
# TYPE allot_master_offers_total counter
allot_master_offers_total 7
allot_master_scheduler_calls_total{type="DECLINE"} 2
allot_master_scheduler_calls_total{type="DECLINE_INVERSE"} 1
allot_master_scheduler_calls_total{type="ACCEPT"} 5
allot_master_offers_total_extra 100
`
	tests := []struct {
		name string
		sum  bool
		want float64
	}{
		{"allot_master_offers_total", false, 7},
		{"allot_master_offers", false, -1}, // exact: a prefix is not a series
		{`allot_master_scheduler_calls_total{type="ACCEPT"}`, false, 5},
		{"allot_master_absent", false, -1},
		{`allot_master_scheduler_calls_total{type="DECLINE`, true, 3},
		{"allot_master_scheduler_calls_total", true, 8},
		{"allot_master_offers_total", true, 107},
		{"allot_master_absent", true, 0},
	}
	for _, tc := range tests {
		if got := metric(body, tc.name, tc.sum); got != tc.want {
			t.Errorf("metric(%q, sum=%v) = %v, want %v", tc.name, tc.sum, got, tc.want)
		}
	}
}

// fatalTB records Fatalf instead of ending the test, so that WaitFor's
// failure can itself be tested.
type fatalTB struct {
	testing.TB
	msg string
}

type fatal struct{}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(fatal{})
}

func waitOrFatal(tb *fatalTB, timeout time.Duration, cond func() bool) (failed bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(fatal); !ok {
				panic(r)
			}
			failed = true
		}
	}()
	WaitFor(tb, timeout, "the thing", cond)
	return false
}

func TestWaitFor(t *testing.T) {
	tests := []struct {
		name      string
		trueAfter int // calls of cond before it holds; -1 never
		failed    bool
	}{
		{"at once", 0, false},
		{"after polls", 3, false},
		{"never", -1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			tb := &fatalTB{TB: t}
			failed := waitOrFatal(tb, 100*time.Millisecond, func() bool {
				calls++
				return tc.trueAfter >= 0 && calls > tc.trueAfter
			})
			if failed != tc.failed {
				t.Fatalf("failed = %v (%q), want %v", failed, tb.msg, tc.failed)
			}
			if failed && !strings.Contains(tb.msg, "waiting for the thing") {
				t.Errorf("failure message %q does not say what was awaited", tb.msg)
			}
			if !failed && calls != tc.trueAfter+1 {
				t.Errorf("cond called %d times, want %d", calls, tc.trueAfter+1)
			}
		})
	}
}

func TestFreePort(t *testing.T) {
	addr := FreePort(t)
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("FreePort = %q, want a loopback address", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening on FreePort's %s: %v", addr, err)
	}
	l.Close()
}

func TestStartOutput(t *testing.T) {
	script := "echo out; echo err >&2; echo $TESTCLUSTER_X; exit 3"
	tests := []struct {
		name        string
		start       func(testing.TB, string, []string, ...string) *Proc
		out, stderr string
	}{
		{"combined", Start, "out\nerr\nx1\n", "out\nerr\nx1\n"},
		{"split", StartSplit, "out\nx1\n", "err\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.start(t, tc.name, []string{"TESTCLUSTER_X=x1"}, "sh", "-c", script)
			select {
			case <-p.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("sh did not exit")
			}
			if got := p.Out.String(); got != tc.out {
				t.Errorf("Out = %q, want %q", got, tc.out)
			}
			if got := p.Stderr.String(); got != tc.stderr {
				t.Errorf("Stderr = %q, want %q", got, tc.stderr)
			}
			var ee *exec.ExitError
			if !errors.As(p.Err(), &ee) || ee.ExitCode() != 3 {
				t.Errorf("Err = %v, want exit status 3", p.Err())
			}
		})
	}
}

func TestKillGroup(t *testing.T) {
	// The child sleep shares the shell's process group: Kill must end both,
	// or Done would wait for the sleep holding the output pipe.
	p := Start(t, "sleeper", nil, "sh", "-c", "sleep 30 & wait")
	if p.Exited() {
		t.Fatal("exited at once")
	}
	t0 := time.Now()
	p.Kill(syscall.SIGTERM)
	if !p.Exited() {
		t.Fatal("Kill returned before the process exited")
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("Kill took %v", d)
	}
}

func TestTail(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 3, "abc"},
		{"abcdef", 2, "...ef"},
	}
	for _, tc := range tests {
		if got := Tail(tc.s, tc.n); got != tc.want {
			t.Errorf("Tail(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// The harness finds an agent's cgroups by the agent's own naming; the
// agent package pins the same value (TestContainerParentPinned).
func TestAgentCgroupParent(t *testing.T) {
	if got, want := AgentCgroupParent("/tmp/allot-work"), "allot/w3c4714a6"; got != want {
		t.Errorf("AgentCgroupParent = %q, want %q", got, want)
	}
}
