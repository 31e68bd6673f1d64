package master

import (
	"errors"
	"net/http"
	"sort"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// multiRoleFramework subscribes a MULTI_ROLE framework in roles, with
// suppressed roles suppressed.
func (h *harness) multiRoleFramework(roles, suppressed []string) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, api.JSON)
	ft := 60.0
	info := mesos.FrameworkInfo{User: "test", Name: "multi", FailoverTimeout: &ft, Roles: roles,
		Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE}}}
	id, sid, err := h.m.admitFramework("", info, suppressed, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	s.nextEvent(h.t, scheduler.Event_SUBSCRIBED)
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

// offerRoles runs a cycle and returns the allocation roles of fw's offers,
// sorted, checking that each offer's resources carry the offer's role.
func (h *harness) offerRoles(fw *fakeFramework) []string {
	h.t.Helper()
	h.allocate()
	ev := fw.nextEvent(h.t, scheduler.Event_OFFERS)
	var roles []string
	for _, o := range ev.Offers.Offers {
		role := o.GetAllocationInfo().GetRole()
		for _, r := range o.Resources {
			if got := r.GetAllocationInfo().GetRole(); got != role {
				h.t.Errorf("offer for role %q has a resource allocated to %q", role, got)
			}
		}
		roles = append(roles, role)
	}
	sort.Strings(roles)
	return roles
}

// A MULTI_ROLE framework is offered resources for each of its roles, each
// offer's allocation_info naming the role; SUPPRESS and REVIVE with roles
// act on those roles only.
func TestMultiRoleOffersPerRole(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:2;mem:1024")
	h.agent("cpus:2;mem:1024")
	fw := h.multiRoleFramework([]string{"a", "b"}, []string{"a"})
	if got := h.offerRoles(fw); strings.Join(got, ",") != "b,b" {
		t.Fatalf("with a suppressed at SUBSCRIBE the offers are for %v, want b's only", got)
	}
	decline := func() {
		h.m.mu.Lock()
		var ids []mesos.OfferID
		for _, o := range h.m.frameworks[fw.id].offers {
			ids = append(ids, mesos.OfferID{Value: o.id()})
		}
		h.m.mu.Unlock()
		zero := 0.0
		if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: ids,
			Filters: &mesos.Filters{RefuseSeconds: &zero}}}); err != nil {
			t.Fatal(err)
		}
	}
	decline()
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_SUPPRESS, Suppress: &scheduler.Call_Suppress{Roles: []string{"b"}}}); err != nil {
		t.Fatal(err)
	}
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_REVIVE, Revive: &scheduler.Call_Revive{Roles: []string{"a"}}}); err != nil {
		t.Fatal(err)
	}
	if got := h.offerRoles(fw); strings.Join(got, ",") != "a,a" {
		t.Fatalf("after SUPPRESS b and REVIVE a the offers are for %v, want a's only", got)
	}
	decline()
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_REVIVE}); err != nil {
		t.Fatal(err)
	}
	if got := h.offerRoles(fw); strings.Join(got, ",") != "a,b" {
		t.Errorf("with both roles revived the two agents are offered for %v, want one for a and one for b", got)
	}
}

// UPDATE_FRAMEWORK may change a MULTI_ROLE framework's roles: offers for a
// role it leaves are rescinded and the next ones are for its new roles;
// bad roles are refused with a 400 naming them.
func TestUpdateFrameworkChangesRoles(t *testing.T) {
	h := newHarness(t, nil)
	h.agent("cpus:2;mem:1024")
	fw := h.multiRoleFramework([]string{"a"}, nil)
	if got := h.offerRoles(fw); strings.Join(got, ",") != "a" {
		t.Fatalf("offers for %v, want a", got)
	}
	update := func(roles []string, suppressed ...string) error {
		ft := 60.0
		info := mesos.FrameworkInfo{User: "test", Name: "multi", FailoverTimeout: &ft, Roles: roles,
			Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE}}}
		return h.call(fw, &scheduler.Call{Type: scheduler.Call_UPDATE_FRAMEWORK,
			UpdateFramework: &scheduler.Call_UpdateFramework{FrameworkInfo: info, SuppressedRoles: suppressed}})
	}
	for _, tt := range []struct {
		roles, suppressed []string
		want              string
	}{
		{[]string{"eng//x"}, nil, `invalid role "eng//x"`},
		{[]string{"b", "b"}, nil, "'FrameworkInfo.roles' contains duplicate items"},
		{[]string{"b"}, []string{"c"}, "suppressed role 'c' is not contained in the list of roles"},
	} {
		err := update(tt.roles, tt.suppressed...)
		var he *api.HTTPError
		if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.As(err, &he) || he.Code != http.StatusBadRequest {
			t.Errorf("UPDATE_FRAMEWORK roles %v suppressed %v: %v, want 400 with %q", tt.roles, tt.suppressed, err, tt.want)
		}
	}
	if err := update([]string{"b", "eng/ml"}); err != nil {
		t.Fatal(err)
	}
	fw.nextEvent(t, scheduler.Event_RESCIND)
	if n := h.outstanding(fw); n != 0 {
		t.Fatalf("%d offers for role a outstanding after it left a", n)
	}
	if got := h.offerRoles(fw); len(got) != 1 || got[0] == "a" {
		t.Errorf("offers for %v after the update, want one for b or eng/ml", got)
	}
}

// A MULTI_ROLE framework's task launched on an offer for role b carries
// b's allocation_info to the agent even where the framework left it out;
// a resource allocated to another role is refused.
func TestMultiRoleTaskCarriesAllocationRole(t *testing.T) {
	h := newHarness(t, nil)
	_, agent := h.agent("cpus:2;mem:1024")
	fw := h.multiRoleFramework([]string{"a", "b"}, []string{"a"})
	h.allocate()
	o := fw.nextEvent(t, scheduler.Event_OFFERS).Offers.Offers[0]
	if o.GetAllocationInfo().GetRole() != "b" {
		t.Fatalf("offer for %q, want b (a is suppressed)", o.GetAllocationInfo().GetRole())
	}
	shell := "true"
	task := func(id string, res ...mesos.Resource) mesos.TaskInfo {
		return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID, Command: &mesos.CommandInfo{Value: &shell}, Resources: res}
	}
	wrong := scalarRes("cpus", 1)
	other := "a"
	wrong.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &other}
	// One ACCEPT: the task with a's resources is refused (TASK_ERROR, as
	// Mesos reports an invalid task), the other one launches.
	err := h.call(fw, &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{OfferIDs: []mesos.OfferID{o.ID},
		Operations: []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{TaskInfos: []mesos.TaskInfo{
			task("t0", wrong), task("t1", scalarRes("cpus", 1), scalarRes("mem", 64))}}}}}})
	if err != nil {
		t.Fatalf("ACCEPT answered %v, want 202", err)
	}
	st := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
	if st.TaskID.Value != "t0" || st.GetState() != mesos.TASK_ERROR || st.GetReason() != mesos.REASON_TASK_INVALID ||
		!strings.Contains(st.GetMessage(), `allocated to role "a", but the offers are allocated to "b"`) {
		t.Errorf("a task with a's resources on b's offer: %s %v %v %q, want t0 TASK_ERROR REASON_TASK_INVALID saying so",
			st.TaskID.Value, st.GetState(), st.GetReason(), st.GetMessage())
	}
	var ti mesos.TaskInfo
	if err := ti.Unmarshal(agent.nextAgentEvent(t, api.AgentEventType_RUN).Task); err != nil {
		t.Fatal(err)
	}
	for _, r := range ti.Resources {
		if r.GetAllocationInfo().GetRole() != "b" {
			t.Errorf("the agent runs t1 with %s allocated to %q, want b", r.Name, r.GetAllocationInfo().GetRole())
		}
	}
}

// A MULTI_ROLE framework holding resources for two roles on one agent: a
// task that ends returns its resources to the role they were allocated
// to (its allocation_info), not to whichever role the framework holds
// first, so each role's allocation stays exact.
func TestMultiRoleTaskEndRecoversToItsRole(t *testing.T) {
	h := newHarness(t, nil)
	agentID, as := h.agent("cpus:2;mem:1024")
	fw := h.multiRoleFramework([]string{"a", "b"}, nil)
	shell := "true"
	zero := 0.0
	launch := func(id string) string {
		h.allocate()
		o := fw.nextEvent(t, scheduler.Event_OFFERS).Offers.Offers[0]
		ti := mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID, Command: &mesos.CommandInfo{Value: &shell},
			Resources: []mesos.Resource{scalarRes("cpus", 1), scalarRes("mem", 64)}}
		if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{OfferIDs: []mesos.OfferID{o.ID},
			Operations: []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH, Launch: &mesos.Offer_Operation_Launch{TaskInfos: []mesos.TaskInfo{ti}}}},
			Filters:    &mesos.Filters{RefuseSeconds: &zero}}}); err != nil {
			t.Fatal(err)
		}
		as.nextAgentEvent(t, api.AgentEventType_RUN)
		return o.GetAllocationInfo().GetRole()
	}
	first, second := launch("t1"), launch("t2")
	if first == second {
		t.Fatalf("both tasks run for role %q, want one per role", first)
	}
	if err := h.agentUpdate(agentID, fw.id, "t2", mesos.TASK_FINISHED, "u1"); err != nil {
		t.Fatal(err)
	}
	h.m.mu.Lock()
	roles := h.m.alloc.Roles()
	h.m.mu.Unlock()
	for _, r := range roles {
		want := ""
		if r.Name == first {
			want = "cpus:1;mem:64"
		}
		if r.Name != first && r.Name != second {
			continue
		}
		if got := r.Allocated.String(); got != want && !(want == "" && r.Allocated.IsEmpty()) {
			t.Errorf("after %s's task t2 ended role %q holds %q, want %q", second, r.Name, got, want)
		}
	}
}
