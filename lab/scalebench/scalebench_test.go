package scalebench

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/testcluster"
)

var allotBin string

func TestMain(m *testing.M) {
	testcluster.Main(m, []testcluster.Package{testcluster.Allot}, func(bins map[string]string) { allotBin = bins["allot"] })
}

// The harness at a tiny size: every agent registers, tasks launch and
// finish through the real master, and every figure is measured (this is
// the harness's behaviour, not its timing).
func TestRunTiny(t *testing.T) {
	cases := []struct {
		name     string
		masters  int
		failover bool
	}{
		{"lone master", 1, false},
		{"three masters with failover", 3, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.failover && testing.Short() {
				t.Skip("failover run skipped in -short")
			}
			cfg := Config{Bin: allotBin, Agents: 20, Frameworks: 2, Masters: tc.masters, Failover: tc.failover,
				Duration: 3 * time.Second, TaskMin: 100 * time.Millisecond, TaskMax: 300 * time.Millisecond,
				SetupTimeout: 30 * time.Second, Dir: t.TempDir()}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rep, err := Run(ctx, cfg, testWriter{t})
			if err != nil {
				t.Fatal(err)
			}
			checkTinyReport(t, rep)
			if tc.failover {
				f := rep.Failover
				if f == nil || f.Agents != cfg.Agents || f.Reregistered < 0 || f.OffersFlow < 0 || f.Elected <= 0 {
					t.Errorf("failover %+v: want all %d agents back, a new leader and offers flowing", f, cfg.Agents)
				}
			}
		})
	}
}

func checkTinyReport(t *testing.T, rep *Report) {
	t.Helper()
	if rep.Registered != rep.Agents || rep.RegisterAll < 0 {
		t.Errorf("registered %d/%d in %v s", rep.Registered, rep.Agents, rep.RegisterAll)
	}
	if rep.TasksFinished == 0 || rep.LaunchRate <= 0 {
		t.Errorf("tasks finished %d, launch rate %v: want some", rep.TasksFinished, rep.LaunchRate)
	}
	if rep.OfferLatency.N == 0 || rep.StatusLatency.N == 0 {
		t.Errorf("offer latency %+v, status latency %+v: want samples", rep.OfferLatency, rep.StatusLatency)
	}
	if rep.MasterCPUTotal <= 0 || rep.MasterRSSMiB <= 0 || rep.RaftCommits <= 0 {
		t.Errorf("master cpu %v s, rss %v MiB, raft commits %v: want all > 0", rep.MasterCPUTotal, rep.MasterRSSMiB, rep.RaftCommits)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) { w.t.Log(string(b)); return len(b), nil }

func TestHistogramQuantile(t *testing.T) {
	h := histogram{bounds: []float64{0.001, 0.01, 0.1, math.Inf(1)}, counts: []float64{10, 90, 100, 100}}
	cases := []struct{ q, want float64 }{
		{0.05, 0.0005}, // inside the first bucket, from 0
		{0.5, 0.0055},  // halfway through the second
		{0.99, 0.091},
		{1, 0.1},
	}
	for _, tc := range cases {
		if got := h.quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("quantile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN((histogram{}).quantile(0.5)) {
		t.Error("quantile of an empty histogram is not NaN")
	}
}

// since leaves what was observed between two scrapes; buckets that do not
// match leave the later scrape as it is.
func TestHistogramSince(t *testing.T) {
	bounds := []float64{0.001, 0.01, math.Inf(1)}
	before := histogram{bounds: bounds, counts: []float64{5, 10, 10}}
	after := histogram{bounds: bounds, counts: []float64{5, 30, 40}}
	d := after.since(before)
	if d.count() != 30 || d.counts[0] != 0 || d.counts[1] != 20 {
		t.Errorf("since = %v, want [0 20 30]", d.counts)
	}
	if got := d.quantile(0.5); got < 0.001 || got > 0.01 {
		t.Errorf("median of the difference %v, want in the second bucket", got)
	}
	if got := after.since(histogram{}); got.count() != 40 {
		t.Errorf("since an empty scrape: %v observations, want 40", got.count())
	}
}

func TestOfferStamp(t *testing.T) {
	cases := []struct {
		id string
		ns int64
		ok bool
	}{
		{"m1-O12-T1700000000000000001", 1700000000000000001, true},
		{"m1-O12", 0, false},
		{"m1-O12-Tx", 0, false},
	}
	for _, tc := range cases {
		at, ok := offerStamp(tc.id)
		if ok != tc.ok || (ok && at.UnixNano() != tc.ns) {
			t.Errorf("offerStamp(%q) = %v, %v", tc.id, at.UnixNano(), ok)
		}
	}
}

func TestLatenciesSummary(t *testing.T) {
	var l Latencies
	for i := 1; i <= 100; i++ {
		l.Add(time.Duration(i) * time.Millisecond)
	}
	s := l.Summary()
	if s.N != 100 || s.P50 != 50 || s.P99 != 99 || s.Max != 100 {
		t.Errorf("summary %+v, want n 100 p50 50 p99 99 max 100", s)
	}
}
