package prophet

import (
	"sort"
	"time"

	"github.com/allot-sched/allot/profile"
)

// AgentTimeline is one agent's availability timeline as the gang criteria
// (prophet, tetris-peak) see it, copied out of the model: the master publishes it in the operator API,
// so that a framework can score its own placement against the same
// prediction.
type AgentTimeline struct {
	Agent string
	// Timeline is an independent clone: the caller may read or change it
	// while the allocator goes on.
	Timeline *profile.Timeline
	// Executors are the predicted executors anchored on the timeline, oldest
	// placement first; their profiles are copies.
	Executors []TimelineExecutor
}

// TimelineExecutor is one executor on an agent's timeline.
type TimelineExecutor struct {
	Framework string
	// Launch is the anchor: the time its resources were offered.
	Launch  time.Time
	Profile profile.Profile
}

// Timelines returns a copy of every agent's availability timeline, sorted
// by agent id, and true; or nil and false when the criterion keeps no
// timelines (m is nil: every sorter but the gang criteria). Read-only:
// nothing in the model changes.
func (m *Model) Timelines() ([]AgentTimeline, bool) {
	if m == nil {
		return nil, false
	}
	out := make([]AgentTimeline, 0, len(m.agents))
	for id, ag := range m.agents {
		at := AgentTimeline{Agent: id, Timeline: ag.TL.Clone(), Executors: make([]TimelineExecutor, len(ag.execs))}
		for i, x := range ag.execs {
			at.Executors[i] = TimelineExecutor{Framework: x.Framework, Launch: time.Unix(0, x.Launch),
				Profile: profile.Profile{Stages: append([]profile.Stage(nil), x.Profile.Stages...)}}
		}
		out = append(out, at)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out, true
}
