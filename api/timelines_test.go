package api

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/allot-sched/allot/profile"
)

// An agent timeline survives JSON and rebuilds to the same availability,
// and skipping a framework takes exactly its executors out.
func TestAgentTimelineRoundTrip(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	tl, _ := profile.NewTimeline(100, 50)
	p := profile.Profile{Stages: []profile.Stage{{Start: 0, End: 10 * time.Second, DiskBW: 60, NetBW: 5}, {Start: 10 * time.Second, End: 20 * time.Second, DiskBW: 10, NetBW: 40}}}
	q := profile.Profile{Stages: []profile.Stage{{Start: 0, End: 30 * time.Second, DiskBW: 30, NetBW: 30}}}
	_ = tl.Add("a", now.Add(-5*time.Second), &p)
	_ = tl.Add("b", now, &q)
	execs := []TimelineExecutor{NewTimelineExecutor("fa", now.Add(-5*time.Second), &p), NewTimelineExecutor("fb", now, &q)}
	at := NewAgentTimeline("S1", tl, execs, now)
	b, err := json.Marshal(at)
	if err != nil {
		t.Fatal(err)
	}
	var back AgentTimeline
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if n := len(back.Segments); n != 3 { // [now,5s) [5s,15s) [15s,30s)
		t.Errorf("%d segments, want 3: %+v", n, back.Segments)
	}
	for _, c := range []struct {
		skip      string
		at        time.Duration
		disk, net float64
	}{
		{"", 2 * time.Second, 100 - 60 - 30, 50 - 5 - 30},
		{"", 7 * time.Second, 100 - 10 - 30, 50 - 40 - 30},
		{"", 25 * time.Second, 70, 20},
		{"fb", 2 * time.Second, 40, 45},
		{"fa", 7 * time.Second, 70, 20},
	} {
		got, err := back.Timeline(c.skip)
		if err != nil {
			t.Fatal(err)
		}
		if d, n := got.At(now.Add(c.at), profile.Disk), got.At(now.Add(c.at), profile.Net); d != c.disk || n != c.net {
			t.Errorf("skip %q at +%v: disk %v net %v, want %v %v", c.skip, c.at, d, n, c.disk, c.net)
		}
	}
}
