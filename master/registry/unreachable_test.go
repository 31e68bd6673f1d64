package registry

import (
	"strings"
	"testing"

	"github.com/allot-sched/allot/api"
)

// The unreachable list: an agent marked unreachable leaves the admitted
// agents; re-registering or being marked gone takes it off the list; GC
// forgets the agents marked before its cutoff, then the oldest beyond its
// count (0: Mesos's default).
func TestRegistryUnreachableAgents(t *testing.T) {
	agent := func(id string) *api.AgentRecord { return &api.AgentRecord{Id: id, Address: "127.0.0.1:5051"} }
	up := func(id string) *api.Command {
		return &api.Command{Type: api.CommandType_AGENT_UPSERT, Agent: agent(id)}
	}
	mark := func(id string, at int64) *api.Command {
		return &api.Command{Type: api.CommandType_AGENT_UNREACHABLE, Agent: agent(id), UnixNano: at}
	}
	gc := func(cutoff int64, limit int32) *api.Command {
		return &api.Command{Type: api.CommandType_AGENT_UNREACHABLE_GC, UnixNano: cutoff, Limit: limit}
	}
	tests := []struct {
		name              string
		cmds              []*api.Command
		unreachable, live string
	}{
		{"marked leaves the admitted agents", []*api.Command{up("a"), up("b"), mark("a", 1)}, "a", "b"},
		{"re-registering makes it reachable", []*api.Command{up("a"), mark("a", 1), up("a")}, "", "a"},
		{"gone leaves the list", []*api.Command{up("a"), mark("a", 1), {Type: api.CommandType_AGENT_REMOVE, Id: "a"}}, "", ""},
		{"marked again moves to the end", []*api.Command{mark("a", 1), mark("b", 2), up("a"), mark("a", 3)}, "b a", ""},
		{"gc by age", []*api.Command{mark("a", 1), mark("b", 2), mark("c", 3), gc(3, 0)}, "c", ""},
		{"gc by count keeps the newest", []*api.Command{mark("a", 1), mark("b", 2), mark("c", 3), gc(0, 2)}, "b c", ""},
		{"gc by age and count", []*api.Command{mark("a", 1), mark("b", 2), mark("c", 3), mark("d", 4), gc(2, 1)}, "d", ""},
		{"gc of nothing", []*api.Command{mark("a", 5), gc(1, 0)}, "a", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			applyAll(t, r, tc.cmds)
			var ids []string
			for _, u := range r.Unreachable() {
				ids = append(ids, u.GetAgent().GetId())
			}
			if got := strings.Join(ids, " "); got != tc.unreachable {
				t.Errorf("unreachable = %q, want %q", got, tc.unreachable)
			}
			ids = nil
			for _, a := range r.Agents() {
				ids = append(ids, a.Id)
			}
			if got := strings.Join(ids, " "); got != tc.live {
				t.Errorf("agents = %q, want %q", got, tc.live)
			}
		})
	}
	if err := NewRegistry().ApplyCommand(&api.Command{Type: api.CommandType_AGENT_UNREACHABLE}); err == nil || !strings.Contains(err.Error(), "without an agent") {
		t.Errorf("AGENT_UNREACHABLE without an agent: %v", err)
	}
}
