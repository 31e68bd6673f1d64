package sched

import (
	"context"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// Config.JobSize rides in the SUBSCRIBE's labels beside the framework's
// own; DeclareJobSize sends UPDATE_FRAMEWORK with the next job's labels,
// and the re-subscription after a failover carries those, not the first.
func TestJobSizeLabels(t *testing.T) {
	f := newFake()
	first := &api.JobSize{Job: "j1", Kind: api.JobSizeUnknown, ApbMb: 2048}
	next := &api.JobSize{Job: "j2", Kind: api.JobSizeKnown, SizeMbS: 4e5, ApbMb: 1024, AmMb: 256}
	typ := "etl"
	c := newClient(t, &fakePlanner{}, f, func(cfg *Config) {
		cfg.JobSize = first
		cfg.Framework.Labels = &mesos.Labels{Labels: []mesos.Label{{Key: "allot.job_type", Value: &typ}}}
	})
	declared := func(info *mesos.FrameworkInfo) *api.JobSize {
		t.Helper()
		js, err := api.JobSizeFromLabels(info.GetLabels())
		if err != nil {
			t.Fatal(err)
		}
		if info.GetLabels().GetLabels()[0].GetKey() != "allot.job_type" {
			t.Errorf("the framework's own label was dropped: %v", info.GetLabels())
		}
		return js
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	f.events <- subscribed("fw-1")
	waitFor(t, "SUBSCRIBED", func() bool { return c.ID() == "fw-1" })
	if js := declared(f.find(scheduler.Call_SUBSCRIBE)[0].Subscribe.FrameworkInfo); !proto.Equal(js, first) {
		t.Fatalf("SUBSCRIBE declares %v, want %v", js, first)
	}
	if err := c.DeclareJobSize(ctx, next); err != nil {
		t.Fatal(err)
	}
	up := f.find(scheduler.Call_UPDATE_FRAMEWORK)
	if len(up) != 1 || up[0].UpdateFramework.FrameworkInfo.GetID().GetValue() != "fw-1" {
		t.Fatalf("UPDATE_FRAMEWORK calls %v", up)
	}
	if js := declared(&up[0].UpdateFramework.FrameworkInfo); !proto.Equal(js, next) {
		t.Fatalf("UPDATE_FRAMEWORK declares %v, want %v", js, next)
	}
	old := f.events
	f.mu.Lock()
	f.events = make(chan *scheduler.Event, 16)
	f.mu.Unlock()
	close(old)
	waitFor(t, "a second SUBSCRIBE", func() bool { return len(f.find(scheduler.Call_SUBSCRIBE)) == 2 })
	if js := declared(f.find(scheduler.Call_SUBSCRIBE)[1].Subscribe.FrameworkInfo); !proto.Equal(js, next) {
		t.Fatalf("re-SUBSCRIBE declares %v, want the latest %v", js, next)
	}
	cancel()
	<-done
}
