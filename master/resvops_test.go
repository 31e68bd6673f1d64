package master

import (
	"net/http"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

func dynRes(name string, v float64, role, principal string) mesos.Resource {
	r := scalarRes(name, v)
	t := mesos.Resource_ReservationInfo_DYNAMIC
	r.Reservations = []mesos.Resource_ReservationInfo{{Type: &t, Role: &role, Principal: &principal}}
	return r
}

func volRes(v float64, role, principal, id string) mesos.Resource {
	r := dynRes("disk", v, role, principal)
	rw := mesos.RW
	r.Disk = &mesos.Resource_DiskInfo{Persistence: &mesos.Resource_DiskInfo_Persistence{ID: id, Principal: &principal},
		Volume: &mesos.Volume{ContainerPath: "data", Mode: &rw}}
	return r
}

// quantitiesOf is the agent's exact resources as quantities by role.
func (h *harness) quantitiesOf(id string) map[string]string {
	h.m.mu.Lock()
	defer h.m.mu.Unlock()
	byRole, err := resources.Quantities(h.m.agents[id].resv.total)
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]string{}
	for role, r := range byRole {
		out[role] = r.String()
	}
	return out
}

// The operator's reservation and volume calls change the agent's exact
// resources, tell the agent what to checkpoint, replicate it, and refuse
// what cannot be done with the status and words Mesos uses.
func TestOperatorReservationCalls(t *testing.T) {
	h := newHarness(t, nil)
	id, agent := h.agent("cpus:8;mem:4096;disk:1000;cpus(ads):2")
	agent.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES)
	aid := mesos.AgentID{Value: id}
	steps := []struct {
		name   string
		call   mmaster.Call
		status int    // 0: accepted
		errHas string // part of the error
		want   map[string]string
	}{
		{"reserve", mmaster.Call{Type: mmaster.Call_RESERVE_RESOURCES, ReserveResources: &mmaster.Call_ReserveResources{AgentID: aid,
			Resources: []mesos.Resource{dynRes("cpus", 4, "eng", "ops"), dynRes("disk", 500, "eng", "ops")}}}, 0, "",
			map[string]string{"*": "cpus:4;mem:4096;disk:500", "ads": "cpus:2", "eng": "cpus:4;disk:500"}},
		{"reserve too much", mmaster.Call{Type: mmaster.Call_RESERVE_RESOURCES, ReserveResources: &mmaster.Call_ReserveResources{AgentID: aid,
			Resources: []mesos.Resource{dynRes("cpus", 5, "eng", "ops")}}}, http.StatusConflict, "is not available", nil},
		{"no agent", mmaster.Call{Type: mmaster.Call_RESERVE_RESOURCES, ReserveResources: &mmaster.Call_ReserveResources{AgentID: mesos.AgentID{Value: "nope"},
			Resources: []mesos.Resource{dynRes("cpus", 1, "eng", "ops")}}}, http.StatusBadRequest, `no agent found with id "nope"`, nil},
		{"no body", mmaster.Call{Type: mmaster.Call_CREATE_VOLUMES}, http.StatusBadRequest, "CREATE_VOLUMES call without create_volumes", nil},
		{"create", mmaster.Call{Type: mmaster.Call_CREATE_VOLUMES, CreateVolumes: &mmaster.Call_CreateVolumes{AgentID: aid,
			Volumes: []mesos.Resource{volRes(200, "eng", "ops", "v1")}}}, 0, "",
			map[string]string{"*": "cpus:4;mem:4096;disk:500", "ads": "cpus:2", "eng": "cpus:4;disk:500"}},
		{"unreserve a volume", mmaster.Call{Type: mmaster.Call_UNRESERVE_RESOURCES, UnreserveResources: &mmaster.Call_UnreserveResources{AgentID: aid,
			Resources: []mesos.Resource{volRes(200, "eng", "ops", "v1")}}}, http.StatusBadRequest, "DESTROY it first", nil},
		{"destroy", mmaster.Call{Type: mmaster.Call_DESTROY_VOLUMES, DestroyVolumes: &mmaster.Call_DestroyVolumes{AgentID: aid,
			Volumes: []mesos.Resource{volRes(200, "eng", "ops", "v1")}}}, 0, "",
			map[string]string{"*": "cpus:4;mem:4096;disk:500", "ads": "cpus:2", "eng": "cpus:4;disk:500"}},
		{"unreserve", mmaster.Call{Type: mmaster.Call_UNRESERVE_RESOURCES, UnreserveResources: &mmaster.Call_UnreserveResources{AgentID: aid,
			Resources: []mesos.Resource{dynRes("cpus", 4, "eng", "ops"), dynRes("disk", 500, "eng", "ops")}}}, 0, "",
			map[string]string{"*": "cpus:8;mem:4096;disk:1000", "ads": "cpus:2"}},
	}
	for _, s := range steps {
		_, err := h.m.operatorCallAs(auth.Subject{}, &s.call)
		if s.status != 0 {
			he, _ := err.(*api.HTTPError)
			if he == nil || he.Code != s.status || !strings.Contains(err.Error(), s.errHas) {
				t.Fatalf("%s: error %v, want %d containing %q", s.name, err, s.status, s.errHas)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		got := h.quantitiesOf(id)
		if len(got) != len(s.want) {
			t.Fatalf("%s: agent holds %v, want %v", s.name, got, s.want)
		}
		for role, w := range s.want {
			if got[role] != w {
				t.Fatalf("%s: agent holds %v, want %v", s.name, got, s.want)
			}
		}
		ev := agent.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES)
		h.m.mu.Lock()
		n := len(h.m.agents[id].checkpointed())
		h.m.mu.Unlock()
		if len(ev.Resources) != n {
			t.Fatalf("%s: CHECKPOINT_RESOURCES carries %d resources, want %d", s.name, len(ev.Resources), n)
		}
	}
}

// A reservation is replicated, and an agent that re-registers without it
// (its checkpoint lost) is told to keep the master's.
func TestReservationsReplicatedAndResent(t *testing.T) {
	h := newHarness(t, nil)
	id, agent := h.agent("cpus:8;mem:4096;disk:1000")
	agent.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES)
	call := mmaster.Call{Type: mmaster.Call_RESERVE_RESOURCES, ReserveResources: &mmaster.Call_ReserveResources{AgentID: mesos.AgentID{Value: id},
		Resources: []mesos.Resource{dynRes("cpus", 2, "eng", "ops")}}}
	if _, err := h.m.operatorCallAs(auth.Subject{}, &call); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if recs := h.m.reg.AgentResources(); len(recs) == 1 && recs[0].AgentId == id && len(recs[0].Resources) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry holds %v", h.m.reg.AgentResources())
		}
	}
	s := newFakeStream(t, api.Protobuf)
	if _, err := h.m.admitAgent(&api.AgentCall{Type: api.AgentCallType_REGISTER, AgentId: id,
		Agent: &api.AgentRecord{Id: id, Hostname: "agent", Address: "127.0.0.1:5051", Resources: "cpus:8;mem:4096;disk:1000"}}, s.Stream); err != nil {
		t.Fatal(err)
	}
	ev := s.nextAgentEvent(t, api.AgentEventType_CHECKPOINT_RESOURCES)
	if len(ev.Resources) != 1 {
		t.Fatalf("re-registered agent told to keep %d resources, want the reservation", len(ev.Resources))
	}
	if got := h.quantitiesOf(id); got["eng"] != "cpus:2" {
		t.Errorf("after re-registration the agent holds %v", got)
	}
}

// GET_AGENTS lists the static reservations in agent_info.resources and the
// dynamic ones in total_resources, as Mesos does (the JSON decodes with
// mesos-go's types); /state has reserved_resources(_full) per agent.
func TestGetAgentsShowsReservations(t *testing.T) {
	h := newHarness(t, nil)
	id, _ := h.agent("cpus:8;mem:4096;cpus(ads):2")
	call := mmaster.Call{Type: mmaster.Call_RESERVE_RESOURCES, ReserveResources: &mmaster.Call_ReserveResources{AgentID: mesos.AgentID{Value: id},
		Resources: []mesos.Resource{dynRes("mem", 1024, "eng", "ops")}}}
	if _, err := h.m.operatorCallAs(auth.Subject{}, &call); err != nil {
		t.Fatal(err)
	}
	resp, err := h.m.operatorCallAs(auth.Subject{}, &mmaster.Call{Type: mmaster.Call_GET_AGENTS})
	if err != nil {
		t.Fatal(err)
	}
	b, err := api.JSON.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var back mmaster.Response
	if err := api.JSON.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	ag := back.GetAgents.Agents[0]
	roles := func(list []mesos.Resource) map[string]string {
		out := map[string]string{}
		for _, r := range list {
			if n := len(r.Reservations); n > 0 {
				out[r.Reservations[n-1].GetRole()] = r.Reservations[n-1].GetType().String() + "/" + r.Reservations[n-1].GetPrincipal()
			}
		}
		return out
	}
	if got := roles(ag.AgentInfo.Resources); len(got) != 1 || got["ads"] != "STATIC/" {
		t.Errorf("agent_info.resources reservations %v, want ads STATIC only", got)
	}
	if got := roles(ag.TotalResources); len(got) != 2 || got["ads"] != "STATIC/" || got["eng"] != "DYNAMIC/ops" {
		t.Errorf("total_resources reservations %v, want ads STATIC and eng DYNAMIC by ops", got)
	}
	h.m.mu.Lock()
	st := h.m.stateAgentsLocked()
	h.m.mu.Unlock()
	if r := st[0].ReservedResources; len(r) != 2 || r["ads"]["cpus"] != 2 || r["eng"]["mem"] != 1024 || len(st[0].ReservedResourcesFull["eng"]) != 1 {
		t.Errorf("/state reserved_resources %v, full %v", r, st[0].ReservedResourcesFull)
	}
}

// The operator's calls are held to Mesos's ACL actions and principal rule:
// reserve_resources by role, unreserve_resources by the reserver's
// principal; a reservation naming another principal than the caller's is a
// 400.
func TestReservationACLs(t *testing.T) {
	acls, err := auth.ParseACLs([]byte(`{"permissive": false,
		"reserve_resources":   [{"principals": {"values": ["ops"]}, "roles": {"values": ["eng"]}}],
		"unreserve_resources": [{"principals": {"values": ["ops"]}, "reserver_principals": {"values": ["ops"]}}],
		"create_volumes":      [{"principals": {"values": ["ops"]}, "roles": {"type": "ANY"}}],
		"destroy_volumes":     [{"principals": {"values": ["ops"]}, "creator_principals": {"type": "ANY"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.Authorizer = acls })
	id, _ := h.agent("cpus:8;mem:4096")
	reserve := func(role, principal string) *mmaster.Call {
		return &mmaster.Call{Type: mmaster.Call_RESERVE_RESOURCES, ReserveResources: &mmaster.Call_ReserveResources{AgentID: mesos.AgentID{Value: id},
			Resources: []mesos.Resource{dynRes("cpus", 1, role, principal)}}}
	}
	ops, eve := auth.Subject{Principal: "ops", Authenticated: true}, auth.Subject{Principal: "eve", Authenticated: true}
	steps := []struct {
		who    auth.Subject
		call   *mmaster.Call
		status int
		errHas string
	}{
		{ops, reserve("eng", "ops"), 0, ""},
		{ops, reserve("ads", "ops"), http.StatusForbidden, "reserve_resources"},
		{eve, reserve("eng", "eve"), http.StatusForbidden, "reserve_resources"},
		{ops, reserve("eng", "eve"), http.StatusBadRequest, `does not match a reserved resource in the request with principal "eve"`},
		{eve, &mmaster.Call{Type: mmaster.Call_UNRESERVE_RESOURCES, UnreserveResources: &mmaster.Call_UnreserveResources{AgentID: mesos.AgentID{Value: id},
			Resources: []mesos.Resource{dynRes("cpus", 1, "eng", "ops")}}}, http.StatusForbidden, "unreserve_resources"},
		{ops, &mmaster.Call{Type: mmaster.Call_UNRESERVE_RESOURCES, UnreserveResources: &mmaster.Call_UnreserveResources{AgentID: mesos.AgentID{Value: id},
			Resources: []mesos.Resource{dynRes("cpus", 1, "eng", "ops")}}}, 0, ""},
	}
	for i, s := range steps {
		_, err := h.m.operatorCallAs(s.who, s.call)
		he, _ := err.(*api.HTTPError)
		switch {
		case s.status == 0 && err != nil:
			t.Errorf("step %d: %v", i, err)
		case s.status != 0 && (he == nil || he.Code != s.status || !strings.Contains(err.Error(), s.errHas)):
			t.Errorf("step %d: error %v, want %d containing %q", i, err, s.status, s.errHas)
		}
	}
}
