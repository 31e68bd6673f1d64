package examples

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/testcluster"
)

// TestDeclinesOffersItCannotUse: an application whose executors (3.1
// cpus) fit once per 4-cpu agent wants three, so the remnants of both
// agents keep being offered to it. It must decline them with a refuse
// filter rather than hold them, while its job runs on the two it got.
func TestDeclinesOffersItCannotUse(t *testing.T) {
	c := newCluster(t)
	const declineMetric = `allot_master_scheduler_calls_total{type="DECLINE"}`
	before := c.MetricSum(declineMetric)
	hold := filepath.Join(t.TempDir(), "release")
	a := c.startApp(t, "testapp", "--executors", "3", "--cores", "3", "--tasks", "4", "--task-ms", "100", "--hold", hold)
	out, errb := a.Out, a.Stderr
	testcluster.WaitFor(t, 60*time.Second, "the job to run on the executors that fit, and a DECLINE", func() bool {
		if a.Exited() {
			t.Fatalf("testapp exited early: %v\n%s", a.Err(), testcluster.Tail(errb.String(), 3000))
		}
		return strings.Contains(errb.String(), "slow job done") && c.MetricSum(declineMetric) > before
	})
	// Still wanting a third executor, the application is offered the
	// remnants again and again; between offers it must hold none.
	testcluster.WaitFor(t, 30*time.Second, "no offer held by the application (master /state)", func() bool {
		f, ok := c.framework("testapp")
		return ok && f.OfferCount == 0 && runningTasks(f) == 2
	})
	if a.Exited() {
		t.Fatalf("testapp exited while holding: %v", a.Err())
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitApp(t, a)
	declines := c.MetricSum(declineMetric) - before
	if out.String() != "slow 4\n" {
		t.Fatalf("stdout %q", out.String())
	}
	evs := events(t, errb.String())
	if n := count(evs, "executor_launched"); n != 2 {
		t.Fatalf("%d executors launched, want the 2 that fit", n)
	}
	calls, maxHeld := 0, 0.0
	for _, e := range evs {
		if e["event"] == "offers_declined" {
			calls++
			if rs := e["refuse_seconds"].(float64); rs <= 0 {
				t.Fatalf("DECLINE sent with refuse_seconds %v, want a refuse filter", rs)
			}
			maxHeld = max(maxHeld, e["held_s"].(float64))
		}
	}
	// Only this application ran, so every DECLINE the master counted is
	// one the library logged with its filter.
	if calls == 0 || float64(calls) != declines {
		t.Fatalf("library logged %d DECLINE calls with a refuse filter, master counted %v", calls, declines)
	}
	t.Logf("%d DECLINE calls, each with a refuse filter; offers held at most %.1f ms before declining", calls, maxHeld*1000)
	c.noExecutorsLeft(t)
}
