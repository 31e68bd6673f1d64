package framework

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/framework/dispatch"
	"github.com/allot-sched/allot/framework/eventlog"
	"github.com/allot-sched/allot/profile"
)

// stateOf is a /state with one agent S1 (100 MB/s disk and NIC) whose
// last interval delivered disk MB/s with the disk busy for busy of it.
func stateOf(busy, disk float64) *operator.State {
	return &operator.State{Slaves: []operator.Agent{{ID: "S1", Resources: map[string]float64{"disk_bw": 100, "net_bw": 100},
		Rates: &operator.Rates{DiskReadMBps: disk, DiskBusy: busy}}}}
}

func TestBackoffRounds(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	// the application's executors read 80 MB/s for their first minute
	prof := &profile.Profile{Stages: []profile.Stage{{Start: 0, End: time.Minute, DiskBW: 80}}}
	young, old := now.Add(-5*time.Second), now.Add(-2*time.Minute)
	other := &api.Timelines{Modelled: true, Agents: []api.AgentTimeline{{AgentID: "S1", DiskBW: 100, NetBW: 100,
		Executors: []api.TimelineExecutor{
			api.NewTimelineExecutor("them", now.Add(-time.Second), &profile.Profile{Stages: []profile.Stage{{Start: 0, End: time.Minute, DiskBW: 60}}}),
			api.NewTimelineExecutor("us", young, prof), // our own, as the master anchored it: not counted twice
		}}}}
	for _, c := range []struct {
		name string
		st   *operator.State
		tls  *api.Timelines
		own  []ownExec
		want string // flagged after the round
	}{
		{"two of ours collide on a busy, slow disk", stateOf(0.95, 10), nil,
			[]ownExec{{"exec-1", "S1", young}, {"exec-2", "S1", young}}, "exec-1,exec-2"},
		{"disk not busy", stateOf(0.5, 10), nil, []ownExec{{"exec-1", "S1", young}, {"exec-2", "S1", young}}, ""},
		{"disk busy at full rate", stateOf(1, 95), nil, []ownExec{{"exec-1", "S1", young}, {"exec-2", "S1", young}}, ""},
		{"one of ours beside another framework's", stateOf(0.95, 10), other, []ownExec{{"exec-1", "S1", young}}, "exec-1"},
		{"alone, predicted to fit", stateOf(0.95, 10), nil, []ownExec{{"exec-1", "S1", young}}, ""},
		{"past its predicted stage", stateOf(0.95, 10), nil, []ownExec{{"exec-1", "S1", old}, {"exec-2", "S1", old}}, ""},
		{"on another agent", stateOf(0.95, 10), nil, []ownExec{{"exec-1", "S9", young}, {"exec-2", "S9", young}}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			bo := &dispatch.Backoff{Inner: dispatch.LocalityWait{}, Params: firstBackoff}
			devs, _ := backoffDevices(now, c.st, c.tls, "us", c.own, prof, bo.Params)
			bo.Round(devs)
			var got []string
			for _, x := range c.own {
				if bo.Flagged(x.id) {
					got = append(got, x.id)
				}
			}
			if s := strings.Join(got, ","); s != c.want {
				t.Errorf("flagged %q, want %q", s, c.want)
			}
		})
	}
}

// A backoff is logged when it starts, naming the device, and when it
// lifts, Hold rounds after the last contested one.
func TestBackoffLogged(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	prof := &profile.Profile{Stages: []profile.Stage{{Start: 0, End: time.Hour, DiskBW: 80}}}
	var buf bytes.Buffer
	var lines []string
	c := &Context{cfg: Config{Logf: func(f string, a ...any) { lines = append(lines, f) }}, clock: RealClock{},
		elog: eventlog.NewWriter(&buf), wake: make(chan struct{}, 1)}
	own := []ownExec{{"exec-1", "S1", now}, {"exec-2", "S1", now}}
	bo := &dispatch.Backoff{Inner: dispatch.LocalityWait{}, Params: firstBackoff}
	flagged := map[string]bool{}
	round := func(st *operator.State) {
		devs, names := backoffDevices(now, st, nil, "us", own, prof, bo.Params)
		bo.Round(devs)
		c.logBackoff(own, devs, names, bo, flagged)
	}
	round(stateOf(0.95, 10))
	for i := 0; i < bo.Params.Hold; i++ {
		round(stateOf(0.1, 10))
	}
	c.elog.Close()
	evs, err := eventlog.ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		if b, ok := ev.(*eventlog.TaskBackoff); ok {
			s := b.Executor + " off"
			if b.On {
				s = b.Executor + " on " + b.Device
				if b.Capacity != 100 || b.Delivered != 10 {
					t.Errorf("%+v: want capacity 100, delivered 10", b)
				}
			}
			got = append(got, s)
		}
	}
	want := "exec-1 on disk_bw,exec-2 on disk_bw,exec-1 off,exec-2 off"
	if s := strings.Join(got, ","); s != want {
		t.Errorf("events %q, want %q", s, want)
	}
	if len(lines) != 4 || !strings.Contains(lines[0], "task backoff on") || !strings.Contains(lines[3], "lifted") {
		t.Errorf("log lines %q", lines)
	}
	select {
	case <-c.wake:
	default:
		t.Error("the job loop was not woken when the backoff lifted")
	}
}

// firstBackoff are the first thresholds (0.8, half, 3 rounds): these
// tests' cases spell out their arithmetic; the defaults are tuned.
var firstBackoff = dispatch.BackoffParams{Trigger: 0.8, Factor: 0.5, Hold: 3, BusyMin: 0.9}
