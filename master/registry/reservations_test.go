package registry

import (
	"bytes"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

func setHeld(id string, res ...string) *api.Command {
	rec := &api.AgentResourcesRecord{AgentId: id}
	for _, r := range res {
		rec.Resources = append(rec.Resources, []byte(r))
	}
	return &api.Command{Type: api.CommandType_AGENT_RESOURCES_SET, AgentResources: rec}
}

// An agent's checkpointed resources are replaced whole, forgotten by an
// empty list or the agent's removal, and kept through a snapshot.
func TestRegistryAgentResources(t *testing.T) {
	r := NewRegistry()
	steps := []struct {
		cmd  *api.Command
		want map[string]int // agent -> resources held
		err  bool
	}{
		{setHeld("a1", "x", "y"), map[string]int{"a1": 2}, false},
		{setHeld("a2", "z"), map[string]int{"a1": 2, "a2": 1}, false},
		{setHeld("a1", "x"), map[string]int{"a1": 1, "a2": 1}, false},
		{setHeld("a1"), map[string]int{"a2": 1}, false},
		{setHeld(""), map[string]int{"a2": 1}, true},
		{setHeld("a3", "w"), map[string]int{"a2": 1, "a3": 1}, false},
		{&api.Command{Type: api.CommandType_AGENT_REMOVE, Id: "a3"}, map[string]int{"a2": 1}, false},
	}
	for i, s := range steps {
		if err := r.ApplyCommand(s.cmd); (err != nil) != s.err {
			t.Fatalf("step %d: error %v, want error %v", i, err, s.err)
		}
		got := map[string]int{}
		for _, rec := range r.AgentResources() {
			got[rec.AgentId] = len(rec.Resources)
		}
		if len(got) != len(s.want) {
			t.Fatalf("step %d: held %v, want %v", i, got, s.want)
		}
		for id, n := range s.want {
			if got[id] != n {
				t.Fatalf("step %d: held %v, want %v", i, got, s.want)
			}
		}
	}
	var buf bytes.Buffer
	if err := r.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	r2 := NewRegistry()
	r2.ApplyCommand(setHeld("stale", "s"))
	if err := r2.Restore(io.NopCloser(bytes.NewReader(buf.Bytes()))); err != nil {
		t.Fatal(err)
	}
	a, b := r.AgentResources(), r2.AgentResources()
	if len(a) != len(b) || !proto.Equal(a[0], b[0]) {
		t.Errorf("restored %v, want %v", b, a)
	}
}
