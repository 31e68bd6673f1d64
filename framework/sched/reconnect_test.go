package sched

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// switchCaller answers through the fake until down is set, then fails
// every call as a dead master's address does.
type switchCaller struct {
	f    *fakeCaller
	down atomic.Bool
	dead failingCaller
	hang bool // a down master takes the connection and never answers
}

func (s *switchCaller) Call(ctx context.Context, c *scheduler.Call) (mesos.Response, error) {
	if s.down.Load() && s.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if s.down.Load() {
		return s.dead.Call(ctx, c)
	}
	return s.f.Call(ctx, c)
}

// A framework that lost its master and finds none within ReconnectTimeout
// gets ErrNoMaster from Run; one that is silent for a few heartbeats (a
// half-open connection) counts as lost too.
func TestReconnectTimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose func(f *fakeCaller)
		hang bool
	}{
		{"stream ends", func(f *fakeCaller) { close(f.events) }, false},
		{"heartbeats stop", func(*fakeCaller) {}, false}, // the fake sends nothing after SUBSCRIBED
		{"stream ends, the master hangs", func(f *fakeCaller) { close(f.events) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &switchCaller{f: newFake(), dead: failingCaller{err: errors.New("connection refused")}, hang: tc.hang}
			c := newClient(t, &fakePlanner{}, s.f, func(cfg *Config) {
				cfg.Caller = func(string) calls.Caller { return s }
				cfg.ReconnectTimeout = 50 * time.Millisecond
			})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			hb := 0.01 // seconds: the watchdog waits 3 of them and a second
			s.f.events <- &scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
				FrameworkID: &mesos.FrameworkID{Value: "fw-1"}, HeartbeatIntervalSeconds: &hb}}
			waitFor(t, "SUBSCRIBED", func() bool { return c.ID() == "fw-1" })
			s.down.Store(true)
			tc.lose(s.f)
			select {
			case err := <-done:
				if !errors.Is(err, ErrNoMaster) {
					t.Fatalf("Run = %v, want ErrNoMaster", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Run kept re-subscribing past ReconnectTimeout")
			}
		})
	}
}
