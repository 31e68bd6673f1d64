package sched

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/apierrors"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// failingCaller answers every call with err and counts them.
type failingCaller struct {
	err   error
	calls atomic.Int64
}

func (f *failingCaller) Call(context.Context, *scheduler.Call) (mesos.Response, error) {
	f.calls.Add(1)
	return nil, f.err
}

// With FirstSubscribeTimeout, a refused first SUBSCRIBE ends Run at once
// and an unreachable master ends it after the timeout; without it, Run
// keeps trying until its context ends.
func TestFirstSubscribeTimeout(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		timeout time.Duration
		want    string // in Run's error; "" means Run must still be trying
	}{
		{"refused 401", apierrors.CodeNotAuthenticated.Error("bad credential"), time.Hour, "bad credential"},
		{"refused 400", apierrors.CodeMalformedRequest.Error("bad role"), time.Hour, "bad role"},
		{"unreachable, bounded", errors.New("connection refused"), 50 * time.Millisecond, "connection refused"},
		{"unreachable, unbounded", errors.New("connection refused"), 0, ""},
		{"unavailable, unbounded by a refusal", apierrors.CodeMesosUnavailable.Error("electing"), time.Hour, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &failingCaller{err: tc.err}
			c, err := New(Config{Masters: []string{"m:5050"}, Caller: func(string) calls.Caller { return f },
				Logf: func(string, ...any) {}, ReconnectBackoffMax: 5 * time.Millisecond, FirstSubscribeTimeout: tc.timeout}, &fakePlanner{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			if tc.want == "" {
				// Still trying after many attempts: only the context ends it.
				waitFor(t, "ten attempts", func() bool { return f.calls.Load() >= 10 })
				select {
				case err := <-done:
					t.Fatalf("Run returned %v, want it to keep trying", err)
				default:
				}
				cancel()
				if err := <-done; !errors.Is(err, context.Canceled) {
					t.Fatalf("Run = %v after cancel, want context.Canceled", err)
				}
				return
			}
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Run = %v, want an error saying %q", err, tc.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Run kept trying")
			}
		})
	}
}
