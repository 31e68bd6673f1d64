package api

import (
	"fmt"
	"time"

	"github.com/allot-sched/allot/profile"
)

// TimelinesPath is the master's operator endpoint for the agents'
// availability timelines (GET, JSON Timelines; ?agent_id= for one agent).
const TimelinesPath = "/timelines"

// Timelines is what GET /timelines answers: each agent's predicted
// availability of disk_bw and net_bw (Prophet's Fig. 4), as the master's
// allocator models it. A framework rebuilds an agent's profile.Timeline
// from it (AgentTimeline.Timeline) and scores its own placement with the
// same math the master's sorter uses.
type Timelines struct {
	// AtUnixNano is the master's clock when it answered; Segments start there.
	AtUnixNano int64  `json:"at_unix_nano"`
	Sorter     string `json:"sorter"`
	// Modelled is false when the master's sorter keeps no timelines (any
	// but prophet and tetris-peak): agents then show their capacities and
	// no executors, and a framework knows only its own.
	Modelled bool            `json:"modelled"`
	Agents   []AgentTimeline `json:"agents"`
}

// AgentTimeline is one agent's timeline.
type AgentTimeline struct {
	AgentID string `json:"agent_id"`
	// DiskBW and NetBW are the agent's advertised capacities (MB/s).
	DiskBW float64 `json:"disk_bw"`
	NetBW  float64 `json:"net_bw"`
	// Executors are the predicted executors anchored on the agent: enough
	// to rebuild the timeline exactly.
	Executors []TimelineExecutor `json:"executors"`
	// Segments are the availability (capacity minus running peaks, may be
	// negative) from AtUnixNano until the last predicted stage ends, for
	// people; empty means the whole capacity is free from now on.
	Segments []TimelineSegment `json:"segments"`
}

// TimelineExecutor is one executor on an agent's timeline.
type TimelineExecutor struct {
	FrameworkID    string          `json:"framework_id"`
	LaunchUnixNano int64           `json:"launch_unix_nano"`
	Stages         []TimelineStage `json:"stages"`
}

// TimelineStage is a profile stage: offsets from the launch, peaks in MB/s.
type TimelineStage struct {
	StartNanos int64   `json:"start_nanos"`
	EndNanos   int64   `json:"end_nanos"`
	DiskBW     float64 `json:"disk_bw"`
	NetBW      float64 `json:"net_bw"`
}

// TimelineSegment is a stretch of constant predicted availability.
type TimelineSegment struct {
	StartUnixNano int64   `json:"start_unix_nano"`
	EndUnixNano   int64   `json:"end_unix_nano"`
	DiskBW        float64 `json:"disk_bw"`
	NetBW         float64 `json:"net_bw"`
}

// NewTimelineExecutor converts one executor's anchored profile.
func NewTimelineExecutor(framework string, launch time.Time, p *profile.Profile) TimelineExecutor {
	x := TimelineExecutor{FrameworkID: framework, LaunchUnixNano: launch.UnixNano(), Stages: make([]TimelineStage, len(p.Stages))}
	for k, s := range p.Stages {
		x.Stages[k] = TimelineStage{StartNanos: int64(s.Start), EndNanos: int64(s.End), DiskBW: s.DiskBW, NetBW: s.NetBW}
	}
	return x
}

// Profile is the executor's profile.
func (x *TimelineExecutor) Profile() profile.Profile {
	p := profile.Profile{Stages: make([]profile.Stage, len(x.Stages))}
	for k, s := range x.Stages {
		p.Stages[k] = profile.Stage{Start: time.Duration(s.StartNanos), End: time.Duration(s.EndNanos), DiskBW: s.DiskBW, NetBW: s.NetBW}
	}
	return p
}

// NewAgentTimeline describes tl, whose executors are execs, as seen at now.
func NewAgentTimeline(agent string, tl *profile.Timeline, execs []TimelineExecutor, now time.Time) AgentTimeline {
	a := AgentTimeline{AgentID: agent, DiskBW: tl.Capacity(profile.Disk), NetBW: tl.Capacity(profile.Net),
		Executors: execs, Segments: []TimelineSegment{}}
	if a.Executors == nil {
		a.Executors = []TimelineExecutor{}
	}
	horizon := now
	for i := range execs {
		p := execs[i].Profile()
		if end := time.Unix(0, execs[i].LaunchUnixNano).Add(p.Life()); end.After(horizon) {
			horizon = end
		}
	}
	for s := range tl.Segments(now, horizon) {
		a.Segments = append(a.Segments, TimelineSegment{StartUnixNano: s.Start.UnixNano(), EndUnixNano: s.End.UnixNano(), DiskBW: s.DiskBW, NetBW: s.NetBW})
	}
	return a
}

// Timeline rebuilds the agent's profile.Timeline from its capacities and
// executors, leaving out those of framework skip (""; none): a framework
// that adds its own executors from what it knows itself skips the master's
// copies of them, so nothing counts twice.
func (a *AgentTimeline) Timeline(skip string) (*profile.Timeline, error) {
	tl, err := profile.NewTimeline(a.DiskBW, a.NetBW)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", a.AgentID, err)
	}
	for i := range a.Executors {
		x := &a.Executors[i]
		if skip != "" && x.FrameworkID == skip {
			continue
		}
		p := x.Profile()
		if err := tl.Add(fmt.Sprintf("%s/%d", x.FrameworkID, i), time.Unix(0, x.LaunchUnixNano), &p); err != nil {
			return nil, fmt.Errorf("agent %s executor %d: %w", a.AgentID, i, err)
		}
	}
	return tl, nil
}
