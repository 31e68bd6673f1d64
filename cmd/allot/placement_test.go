package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/allot-sched/allot/api/operator"
)

// syncBuffer is a bytes.Buffer safe for the watcher's goroutine and the
// test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// allot run's watcher says nothing in the first cycles, prints each new
// reason once, and fails only after two readings in a row say no agent
// could ever run the task.
func TestWatchPlacement(t *testing.T) {
	answers := []operator.Unplaced{
		{Reason: "no_room", IdleCycles: 1, Message: "too early to say"},
		{Reason: "no_room", IdleCycles: 3, Message: "needs cpus 2; largest free 1 on 2 agents"},
		{Reason: "no_room", IdleCycles: 4, Message: "needs cpus 2; largest free 1 on 2 agents"},
		{Reason: "too_big", Never: true, IdleCycles: 5, Message: "agents re-registering"},
		{Reason: "waiting", IdleCycles: 6, Message: "eligible on 2 agents"},
		{Reason: "too_big", Never: true, IdleCycles: 7, Message: "needs cpus 16; the largest agent has 4 cpus"},
		{Reason: "too_big", Never: true, IdleCycles: 8, Message: "needs cpus 16; the largest agent has 4 cpus"},
	}
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/explain" || r.URL.Query().Get("framework_id") != "fw-1" || r.URL.Query().Get("format") != "json" {
			http.Error(w, "unexpected "+r.URL.String(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		a := answers[min(n, len(answers)-1)]
		n++
		mu.Unlock()
		json.NewEncoder(w).Encode(a)
	}))
	defer srv.Close()
	var stderr syncBuffer
	never := watchPlacement(context.Background(), srv.Client(), strings.TrimPrefix(srv.URL, "http://"), "fw-1", time.Millisecond,
		func() bool { return false }, &stderr)
	var err error
	select {
	case err = <-never:
	case <-time.After(time.Minute):
		t.Fatalf("no error after every answer; stderr:\n%s", stderr.String())
	}
	if err == nil || !strings.Contains(err.Error(), "no agent can run this task: needs cpus 16; the largest agent has 4 cpus") {
		t.Errorf("error %v, want the last reason", err)
	}
	if got, want := stderr.String(), "allot run: no offer yet: needs cpus 2; largest free 1 on 2 agents\n"; got != want {
		t.Errorf("stderr %q, want %q alone", got, want)
	}
}
