package master

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

// wantUpdate is a status update the master must send for a task it does
// not launch.
type wantUpdate struct {
	state  mesos.TaskState
	reason mesos.TaskStatus_Reason
	msg    string // in the message
}

// partitionAwareFramework subscribes a framework that declares
// PARTITION_AWARE.
func (h *harness) partitionAwareFramework(name string) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, api.JSON)
	ft := 60.0
	info := mesos.FrameworkInfo{User: "test", Name: name, FailoverTimeout: &ft,
		Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE}}}
	id, sid, err := h.m.admitFramework("", info, nil, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	s.nextEvent(h.t, scheduler.Event_SUBSCRIBED)
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

// invalidOfferCase is an ACCEPT whose offers cannot be used and the
// update its task t1 must get.
type invalidOfferCase struct {
	name string
	pa   bool
	call func(o mesos.Offer, agentID string) *scheduler.Call
	want wantUpdate
}

func invalidOfferCases() []invalidOfferCase {
	lost := func(msg string) wantUpdate { return wantUpdate{mesos.TASK_LOST, mesos.REASON_INVALID_OFFERS, msg} }
	return []invalidOfferCase{
		{"unknown offer", false, func(o mesos.Offer, a string) *scheduler.Call {
			o.ID.Value = "no-such-offer"
			return launchCall(o, nil, commandTask("t1", a, 1, 128))
		}, lost("Task launched with invalid offers: Offer no-such-offer is no longer valid")},
		{"unknown offer, partition aware", true, func(o mesos.Offer, a string) *scheduler.Call {
			o.ID.Value = "no-such-offer"
			return launchCall(o, nil, commandTask("t1", a, 1, 128))
		}, wantUpdate{mesos.TASK_DROPPED, mesos.REASON_INVALID_OFFERS, "Offer no-such-offer is no longer valid"}},
		// The tables key offers by sequence number; a name that parses to
		// an outstanding offer's number but is not its id names nothing.
		{"leading zero in the sequence number", false, func(o mesos.Offer, a string) *scheduler.Call {
			o.ID.Value = strings.Replace(o.ID.Value, "-O", "-O0", 1)
			return launchCall(o, nil, commandTask("t1", a, 1, 128))
		}, lost("is no longer valid")},
		{"another stamp", false, func(o mesos.Offer, a string) *scheduler.Call {
			o.ID.Value += "-T1"
			return launchCall(o, nil, commandTask("t1", a, 1, 128))
		}, lost("is no longer valid")},
		{"another master's prefix", false, func(o mesos.Offer, a string) *scheduler.Call {
			o.ID.Value = "x" + o.ID.Value
			return launchCall(o, nil, commandTask("t1", a, 1, 128))
		}, lost("is no longer valid")},
		{"offer listed twice", false, func(o mesos.Offer, a string) *scheduler.Call {
			c := launchCall(o, nil, commandTask("t1", a, 1, 128))
			c.Accept.OfferIDs = append(c.Accept.OfferIDs, o.ID)
			return c
		}, lost("Task launched with invalid offers: Duplicate offer " + "%ID%" + " in offer list")},
		{"no offers", true, func(o mesos.Offer, a string) *scheduler.Call {
			c := launchCall(o, nil, commandTask("t1", a, 1, 128))
			c.Accept.OfferIDs = nil
			return c
		}, wantUpdate{mesos.TASK_DROPPED, mesos.REASON_INVALID_OFFERS, "Task launched with invalid offers: No offers specified"}},
	}
}

// An ACCEPT whose offers cannot be used is answered as in Mesos: no error
// (202), and each of its tasks TASK_LOST, or TASK_DROPPED to a
// PARTITION_AWARE framework, with REASON_INVALID_OFFERS and Mesos's
// message; the offers it named that were still outstanding go back to
// the allocator unfiltered.
func TestAcceptWithInvalidOffersDropsTasks(t *testing.T) {
	for _, tc := range invalidOfferCases() {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			agentID, _ := h.agent("cpus:4;mem:4096")
			var fw *fakeFramework
			if tc.pa {
				fw = h.partitionAwareFramework("drop")
			} else {
				fw = h.framework("drop")
			}
			o := h.offer(fw)
			if err := h.call(fw, tc.call(o, agentID)); err != nil {
				t.Fatalf("ACCEPT answered %v, want no error (202)", err)
			}
			st := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
			want := strings.ReplaceAll(tc.want.msg, "%ID%", o.ID.Value)
			if st.TaskID.Value != "t1" || st.GetState() != tc.want.state || st.GetReason() != tc.want.reason ||
				st.GetSource() != mesos.SOURCE_MASTER || !strings.Contains(st.GetMessage(), want) || len(st.UUID) != 0 {
				t.Errorf("update %s %v %v %v %q uuid %x, want %v %v from the master with %q and no uuid",
					st.TaskID.Value, st.GetState(), st.GetReason(), st.GetSource(), st.GetMessage(), st.UUID, tc.want.state, tc.want.reason, want)
			}
			// The offer stays outstanding where the call did not name it.
			named := tc.call(o, agentID).Accept.OfferIDs
			if n := h.outstanding(fw); len(named) > 0 && named[0] == o.ID && n != 0 {
				t.Errorf("%d offers outstanding, want the accepted one discarded", n)
			} else if (len(named) == 0 || named[0] != o.ID) && n != 1 {
				t.Errorf("%d offers outstanding, want the one the call did not name", n)
			}
			h.m.mu.Lock()
			tasks := len(h.m.frameworks[fw.id].tasks)
			h.m.mu.Unlock()
			if tasks != 0 {
				t.Errorf("%d tasks recorded, want none", tasks)
			}
			if h.outstanding(fw) != 0 {
				return
			}
			// Unfiltered: the whole agent is offered again at once.
			if got := scalarsOf(h.offer(fw).Resources); got["cpus"] != 4 {
				t.Errorf("offered again %v, want all 4 cpus", got)
			}
		})
	}
}

// An ACCEPT of a declined offer, the race a client library must survive,
// is answered 202 and TASK_LOST.
func TestAcceptOfDeclinedOfferIsTaskLost(t *testing.T) {
	h := newHarness(t, nil)
	agentID, _ := h.agent("cpus:4;mem:4096")
	fw := h.framework("late")
	o := h.offer(fw)
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_DECLINE, Decline: &scheduler.Call_Decline{OfferIDs: []mesos.OfferID{o.ID}}}); err != nil {
		t.Fatal(err)
	}
	if err := h.call(fw, launchCall(o, nil, commandTask("late", agentID, 1, 128))); err != nil {
		t.Fatalf("ACCEPT of a declined offer answered %v, want no error (202)", err)
	}
	st := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
	if st.GetState() != mesos.TASK_LOST || st.GetReason() != mesos.REASON_INVALID_OFFERS || st.GetAgentID().GetValue() != agentID {
		t.Errorf("update %v %v agent %v, want TASK_LOST REASON_INVALID_OFFERS on %s", st.GetState(), st.GetReason(), st.GetAgentID(), agentID)
	}
}

// invalidTaskCase is tasks launched before a good one (or as a group
// beside it), which tasks must launch and the updates the others get.
type invalidTaskCase struct {
	name     string
	tasks    func(a string) []mesos.TaskInfo // launched with "good" (1 cpu) after them
	group    bool                            // the tasks are one LAUNCH_GROUP instead
	launched []string
	want     map[string]wantUpdate
}

func invalidTaskCases() []invalidTaskCase {
	invalid := func(msg string) wantUpdate { return wantUpdate{mesos.TASK_ERROR, mesos.REASON_TASK_INVALID, msg} }
	docker, mesosType := mesos.ContainerInfo_DOCKER, mesos.ContainerInfo_MESOS
	withContainer := func(ti mesos.TaskInfo, c mesos.ContainerInfo) mesos.TaskInfo { ti.Container = &c; return ti }
	return []invalidTaskCase{
		{"bigger than the offer", func(a string) []mesos.TaskInfo { return []mesos.TaskInfo{commandTask("big", a, 1000, 128)} },
			false, []string{"good"}, map[string]wantUpdate{"big": invalid("Total resources cpus:1000;mem:128 required by task and its executor is more than available")}},
		{"wrong agent", func(a string) []mesos.TaskInfo { return []mesos.TaskInfo{commandTask("lost", "elsewhere", 1, 128)} },
			false, []string{"good"}, map[string]wantUpdate{"lost": invalid("Task uses invalid agent elsewhere while agent ")}},
		{"duplicate task id", func(a string) []mesos.TaskInfo {
			return []mesos.TaskInfo{commandTask("good", a, 1, 128)}
		}, false, []string{"good"}, map[string]wantUpdate{"good": invalid("Task has duplicate ID: good")}},
		{"bad task id", func(a string) []mesos.TaskInfo { return []mesos.TaskInfo{commandTask("a/b", a, 1, 128)} },
			false, []string{"good"}, map[string]wantUpdate{"a/b": invalid("'a/b' contains invalid characters")}},
		{"no resources", func(a string) []mesos.TaskInfo {
			ti := commandTask("empty", a, 0, 0)
			ti.Resources = nil
			return []mesos.TaskInfo{ti}
		}, false, []string{"good"}, map[string]wantUpdate{"empty": invalid("Task uses no resources")}},
		{"neither command nor executor", func(a string) []mesos.TaskInfo {
			ti := commandTask("bare", a, 1, 128)
			ti.Command = nil
			return []mesos.TaskInfo{ti}
		}, false, []string{"good"}, map[string]wantUpdate{"bare": invalid("at least one (but not both) of CommandInfo or ExecutorInfo")}},
		{"docker container", func(a string) []mesos.TaskInfo {
			return []mesos.TaskInfo{withContainer(commandTask("docker", a, 1, 128), mesos.ContainerInfo{Type: &docker,
				Docker: &mesos.ContainerInfo_DockerInfo{Image: "busybox"}})}
		}, false, []string{"good"}, map[string]wantUpdate{"docker": invalid("Task's ContainerInfo is not supported by allot: the DOCKER containerizer needs a Docker daemon and no Docker daemon is configured")}},
		{"mesos container with an image runs", func(a string) []mesos.TaskInfo {
			return []mesos.TaskInfo{withContainer(commandTask("image", a, 1, 128), mesos.ContainerInfo{Type: &mesosType,
				Mesos: &mesos.ContainerInfo_MesosInfo{Image: &mesos.Image{Type: mesos.Image_DOCKER.Enum(), Docker: &mesos.Image_Docker{Name: "busybox"}}}})}
		}, false, []string{"image", "good"}, nil},
		{"executor's docker container", func(a string) []mesos.TaskInfo {
			ti := commandTask("exdocker", a, 1, 128)
			ti.Command = nil
			ti.Executor = &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "x"}, Command: &mesos.CommandInfo{Value: strPtr("true")},
				Container: &mesos.ContainerInfo{Type: &docker}}
			return []mesos.TaskInfo{ti}
		}, false, []string{"good"}, map[string]wantUpdate{"exdocker": invalid("Executor's ContainerInfo is not supported by allot: the DOCKER containerizer")}},
		{"plain mesos container runs", func(a string) []mesos.TaskInfo {
			return []mesos.TaskInfo{withContainer(commandTask("plain", a, 1, 128), mesos.ContainerInfo{Type: &mesosType})}
		}, false, []string{"plain", "good"}, nil},
		{"group with a task too big", func(a string) []mesos.TaskInfo {
			return []mesos.TaskInfo{commandTask("g1", a, 1, 128), commandTask("g2", a, 1000, 128)}
		}, true, []string{"good"}, map[string]wantUpdate{
			"g1": {mesos.TASK_ERROR, mesos.REASON_TASK_GROUP_INVALID, "Task 'g2' is invalid: Total resources"},
			"g2": {mesos.TASK_ERROR, mesos.REASON_TASK_GROUP_INVALID, "Task 'g2' is invalid: Total resources"}}},
	}
}

// A task that cannot run is answered TASK_ERROR (REASON_TASK_INVALID, or
// REASON_TASK_GROUP_INVALID for every task of its group) with Mesos's
// message, takes nothing from the offer, and the rest of the ACCEPT
// launches; the call is not an error (202).
func TestAcceptRefusesInvalidTasks(t *testing.T) {
	groupEx := mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "gx"}, Type: mesos.ExecutorInfo_DEFAULT,
		Resources: []mesos.Resource{scalarRes("cpus", 0.1), scalarRes("mem", 32)}}
	for _, tc := range invalidTaskCases() {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			agentID, agent := h.agent("cpus:4;mem:4096")
			fw := h.framework("refuse")
			o := h.offer(fw)
			good := commandTask("good", agentID, 1, 128)
			call := launchCall(o, nil, append(tc.tasks(agentID), good)...)
			if tc.group {
				call = launchCall(o, nil, good)
				call.Accept.Operations = append([]mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH_GROUP,
					LaunchGroup: &mesos.Offer_Operation_LaunchGroup{Executor: groupEx, TaskGroup: mesos.TaskGroupInfo{Tasks: tc.tasks(agentID)}}}},
					call.Accept.Operations...)
			}
			if err := h.call(fw, call); err != nil {
				t.Fatalf("ACCEPT answered %v, want no error (202)", err)
			}
			for range tc.want {
				st := fw.nextEvent(t, scheduler.Event_UPDATE).Update.Status
				w, ok := tc.want[st.TaskID.Value]
				if !ok || st.GetState() != w.state || st.GetReason() != w.reason || st.GetSource() != mesos.SOURCE_MASTER ||
					!strings.Contains(st.GetMessage(), w.msg) || st.GetAgentID().GetValue() != agentID {
					t.Errorf("update %s %v %v %v %q on %v, want %v %v from the master with %q on %s",
						st.TaskID.Value, st.GetState(), st.GetReason(), st.GetSource(), st.GetMessage(), st.GetAgentID(), w.state, w.reason, w.msg, agentID)
				}
			}
			for _, id := range tc.launched {
				var ti mesos.TaskInfo
				if ti.Unmarshal(agent.nextAgentEvent(t, api.AgentEventType_RUN).Task); ti.TaskID.Value != id {
					t.Errorf("RUN for %q, want %q", ti.TaskID.Value, id)
				}
			}
			h.m.mu.Lock()
			recorded := len(h.m.frameworks[fw.id].tasks)
			h.m.mu.Unlock()
			if recorded != len(tc.launched) {
				t.Errorf("%d tasks recorded, want %v", recorded, tc.launched)
			}
		})
	}
}
