package agent

import (
	"testing"
	"time"

	"github.com/allot-sched/allot/api"
)

// A PING is answered (an empty AGENT_BATCH) only when the master has taken
// no call from the agent for pongAfter.
func TestAnswerPing(t *testing.T) {
	tests := []struct {
		name     string
		lastSent time.Duration // ago; 0: never
		answered bool
	}{
		{"never sent", 0, true},
		{"sent just now", time.Second, false},
		{"sent long ago", 2 * pongAfter, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{sendq: make(chan *api.AgentCall, 4)}
			if tc.lastSent > 0 {
				a.lastSent.Store(time.Now().Add(-tc.lastSent).UnixNano())
			}
			a.answerPing()
			if got := len(a.sendq); got != map[bool]int{true: 1, false: 0}[tc.answered] {
				t.Fatalf("%d calls queued, want answered %v", got, tc.answered)
			}
			if tc.answered {
				if c := <-a.sendq; c.Type != api.AgentCallType_AGENT_BATCH || len(c.Batch) != 0 {
					t.Errorf("answered with %v of %d calls, want an empty AGENT_BATCH", c.Type, len(c.Batch))
				}
			}
		})
	}
}
