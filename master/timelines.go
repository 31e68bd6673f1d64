package master

import (
	"encoding/json"
	"net/http"

	"github.com/allot-sched/allot/allocator/policy/prophet"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/profile"
	"github.com/allot-sched/allot/resources"
)

// handleTimelines serves GET /timelines: every agent's availability
// timeline of disk_bw and net_bw as the allocator's gang model predicts it
// (api.Timelines), or one agent's with ?agent_id= (404 if unknown). Under a
// sorter that keeps no timelines the agents show their capacities only
// (modelled: false), so that a framework placing by Prophet's score under
// any sorter still learns what the agents advertise. Executors of
// frameworks the caller may not view are left out. Takes m.mu.
func (m *Master) handleTimelines(w http.ResponseWriter, r *http.Request) {
	want := r.URL.Query().Get("agent_id")
	m.mu.Lock()
	doc := m.visibleTimelinesLocked(auth.SubjectFrom(r.Context()), m.timelinesLocked(want))
	m.mu.Unlock()
	if want != "" && len(doc.Agents) == 0 {
		http.Error(w, "unknown agent "+want, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(doc)
}

// timelinesLocked builds the answer for agent only ("" for all). Caller
// holds m.mu.
func (m *Master) timelinesLocked(agent string) api.Timelines {
	now := m.clock.Now()
	doc := api.Timelines{AtUnixNano: now.UnixNano(), Sorter: m.sorterName(), Agents: []api.AgentTimeline{}}
	tls, ok := prophet.Of(m.alloc).Timelines()
	doc.Modelled = ok
	if ok {
		for _, at := range tls {
			if agent != "" && at.Agent != agent {
				continue
			}
			execs := make([]api.TimelineExecutor, len(at.Executors))
			for i := range at.Executors {
				x := &at.Executors[i]
				execs[i] = api.NewTimelineExecutor(x.Framework, x.Launch, &x.Profile)
			}
			doc.Agents = append(doc.Agents, api.NewAgentTimeline(at.Agent, at.Timeline, execs, now))
		}
		return doc
	}
	for _, id := range sortedKeys(m.agents) {
		if agent != "" && id != agent {
			continue
		}
		t := m.agents[id].total
		tl, err := profile.NewTimeline(t.Scalars[resources.DiskBW].Units(), t.Scalars[resources.NetBW].Units())
		if err != nil { // beyond profile's caps: the allocator scores it as none too
			tl, _ = profile.NewTimeline(0, 0)
		}
		doc.Agents = append(doc.Agents, api.NewAgentTimeline(id, tl, nil, now))
	}
	return doc
}
