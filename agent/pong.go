package agent

import (
	"time"

	"github.com/allot-sched/allot/api"
)

// The master takes an agent's calls as its sign of life: one that has
// heard nothing from a connected agent for its --agent-ping-timeout marks
// it unreachable, as Mesos's master does an agent that misses its pings.
// Usage reports and status updates are such calls; an agent with nothing
// to say answers the master's PING with an empty AGENT_BATCH once its last
// call is older than pongAfter, so that a quiet agent (a long
// --usage-interval) is not taken for a lost one.

// pongAfter is how old the last call may be before a PING is answered:
// two of the master's ping intervals, well inside any ping timeout.
const pongAfter = 10 * time.Second

// answerPing answers a PING if the master has heard nothing lately.
func (a *Agent) answerPing() {
	if time.Since(time.Unix(0, a.lastSent.Load())) < pongAfter {
		return
	}
	a.send(&api.AgentCall{Type: api.AgentCallType_AGENT_BATCH})
}
