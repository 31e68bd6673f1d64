package agent

import (
	"context"
	"testing"
	"time"
)

// startedAgent creates and starts an agent from cfg for a test and stops
// it when the test ends.
func startedAgent(t *testing.T, cfg Config) *Agent {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a.Stop(ctx)
	})
	return a
}
