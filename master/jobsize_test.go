package master

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

func sizedInfo(name string, js *api.JobSize) mesos.FrameworkInfo {
	ft := 60.0
	return mesos.FrameworkInfo{User: "test", Name: name, FailoverTimeout: &ft,
		Labels: &mesos.Labels{Labels: api.JobSizeLabels(js)}}
}

// subscribeInfo subscribes (id "" for a new framework) with info.
func (h *harness) subscribeInfo(id string, info mesos.FrameworkInfo) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, api.JSON)
	id, sid, err := h.m.admitFramework(id, info, nil, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	s.nextEvent(h.t, scheduler.Event_SUBSCRIBED)
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

func known(job string, size, apb float64) *api.JobSize {
	return &api.JobSize{Job: job, Kind: api.JobSizeKnown, SizeMbS: size, ApbMb: apb}
}

func updateFramework(info mesos.FrameworkInfo, js *api.JobSize) *scheduler.Call {
	info.Labels = api.WithJobSize(info.Labels, js)
	return &scheduler.Call{Type: scheduler.Call_UPDATE_FRAMEWORK, UpdateFramework: &scheduler.Call_UpdateFramework{FrameworkInfo: info}}
}

func jobSizeRequest(res ...mesos.Resource) *scheduler.Call {
	return &scheduler.Call{Type: scheduler.Call_REQUEST, Request: &scheduler.Call_Request{Requests: []mesos.Request{{Resources: res}}}}
}

// offerOrder runs allocation cycles until none offers anything; each must
// offer to exactly one of fws (by name), which declines for an hour. It
// returns the names in the order they were offered to.
func (h *harness) offerOrder(fws map[string]*fakeFramework) []string {
	h.t.Helper()
	var order []string
	for len(order) <= len(fws) {
		h.allocate()
		var got []string
		for name, fw := range fws {
			if h.outstanding(fw) > 0 {
				got = append(got, name)
			}
		}
		if len(got) == 0 {
			return order
		}
		if len(got) > 1 {
			h.t.Fatalf("one cycle offered to %v", got)
		}
		fw := fws[got[0]]
		ev := fw.nextEvent(h.t, scheduler.Event_OFFERS)
		var ids []mesos.OfferID
		for _, o := range ev.Offers.Offers {
			ids = append(ids, o.ID)
		}
		hour := 3600.0
		if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_DECLINE,
			Decline: &scheduler.Call_Decline{OfferIDs: ids, Filters: &mesos.Filters{RefuseSeconds: &hour}}}); err != nil {
			h.t.Fatal(err)
		}
		order = append(order, got[0])
	}
	h.t.Fatalf("more offers than frameworks: %v", order)
	return nil
}

// FrameworkInfo labels order offers under fspy by remaining virtual size;
// a head job replaced with UPDATE_FRAMEWORK takes its place; a new leader
// restores the virtual cluster and declares the recorded sizes again, so
// the order after re-election is the one before it. A reset virtual
// cluster would put b before a (a has been served alone for 100 s, b is
// smaller than a's whole size); a declaration lost with the failover would
// put c last.
func TestJobSizeOrderSurvivesReelection(t *testing.T) {
	for _, syncLast := range []bool{false, true} {
		name := "declared-after-the-last-policy-sync"
		if syncLast {
			name = "all-replicated"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, func(c *Config) { c.Sorter = "fspy" })
			h.agent("cpus:4;mem:4096")
			infos := map[string]mesos.FrameworkInfo{"a": sizedInfo("a", known("a1", 1e6, 4096))}
			fws := map[string]*fakeFramework{"a": h.subscribeInfo("", infos["a"])}
			h.clock.Advance(100 * time.Second) // a alone: 409,600 MB x s served
			for name, js := range map[string]*api.JobSize{"b": known("b1", 8e5, 4096), "c": known("c1", 2e6, 4096)} {
				infos[name] = sizedInfo(name, js)
				fws[name] = h.subscribeInfo("", infos[name])
			}
			if got := h.offerOrder(fws); !slices.Equal(got, []string{"a", "b", "c"}) {
				t.Fatalf("offer order %v, want a b c", got)
			}
			if _, err := h.m.syncPolicies(); err != nil {
				t.Fatal(err)
			}
			h.clock.Advance(10 * time.Second)
			// c's next job is the smallest: the head job declaration replaces c1.
			up := updateFramework(infos["c"], known("c2", 1e5, 4096))
			if err := h.call(fws["c"], up); err != nil {
				t.Fatal(err)
			}
			infos["c"] = up.UpdateFramework.FrameworkInfo
			h.agent("cpus:4;mem:4096")
			if got := h.offerOrder(fws); !slices.Equal(got, []string{"c", "a", "b"}) {
				t.Fatalf("offer order after c's new head job %v, want c a b", got)
			}
			var before []byte
			if syncLast {
				if proposed, err := h.m.syncPolicies(); err != nil || !proposed {
					t.Fatalf("syncPolicies = %v, %v", proposed, err)
				}
				before = h.policies()
			}
			h.reelect(t)
			if syncLast && !bytes.Equal(h.policies(), before) {
				t.Error("the new leader's virtual cluster differs from the replicated one: declaring the recorded sizes again reset or counted a job twice")
			}
			for name, fw := range fws {
				fws[name] = h.subscribeInfo(fw.id, infos[name])
			}
			h.agent("cpus:4;mem:4096")
			if got := h.offerOrder(fws); !slices.Equal(got, []string{"c", "a", "b"}) {
				t.Fatalf("offer order after re-election %v, want c a b", got)
			}
		})
	}
}

// A size declared with REQUEST (a prediction for the job the labels
// declared) is replicated, and re-subscribing with the same labels does
// not undo it; new labels do replace it.
func TestJobSizeRequestThenResubscribe(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Sorter = "fspy" })
	h.agent("cpus:4;mem:4096")
	info := sizedInfo("p", &api.JobSize{Job: "p1", Kind: api.JobSizeUnknown, ApbMb: 2048})
	fw := h.subscribeInfo("", info)
	if err := h.call(fw, jobSizeRequest(scalarRes("cpus", 1), scalarRes("mem", 100), scalarRes("tasks", 3))); err != nil {
		t.Fatal(err)
	}
	pred := &api.JobSize{Job: "p1", Kind: api.JobSizePredicted, SizeMbS: 5e4, ApbMb: 2048, AmMb: 512}
	if err := h.call(fw, jobSizeRequest(api.JobSizeResource(pred))); err != nil {
		t.Fatal(err)
	}
	h.m.mu.Lock()
	st, err := h.m.alloc.Framework(fw.id)
	h.m.mu.Unlock()
	if err != nil || st.Demand.Tasks != 3 || st.Demand.Task.Scalars[resources.CPUs].Units() != 1 {
		t.Errorf("a REQUEST with only a job size changed the per-task demand to %+v (%v)", st.Demand, err)
	}
	declared := func() *api.JobSize {
		h.m.mu.Lock()
		defer h.m.mu.Unlock()
		return h.m.frameworks[fw.id].jobSize
	}
	if !proto.Equal(declared(), pred) {
		t.Fatalf("after REQUEST the declaration is %v, want %v", declared(), pred)
	}
	// the record is proposed without waiting for the commit
	deadline := time.Now().Add(5 * time.Second)
	for rec := h.recordOf(fw.id); !proto.Equal(rec.GetJobSize(), pred); rec = h.recordOf(fw.id) {
		if time.Now().After(deadline) {
			t.Fatalf("registry record holds %v, want %v", rec.GetJobSize(), pred)
		}
		time.Sleep(5 * time.Millisecond)
	}
	fw = h.subscribeInfo(fw.id, info)
	if !proto.Equal(declared(), pred) {
		t.Fatalf("re-subscribing with the same labels changed the declaration to %v", declared())
	}
	next := known("p2", 7e4, 1024)
	fw = h.subscribeInfo(fw.id, sizedInfo("p", next))
	if want := next; !proto.Equal(declared(), want) {
		t.Fatalf("new labels declare %v, want %v", declared(), want)
	}
	// Without labels a framework keeps its job id default: its framework id.
	other := h.subscribeInfo("", sizedInfo("q", known("", 10, 1024)))
	h.m.mu.Lock()
	job := h.m.frameworks[other.id].jobSize.GetJob()
	h.m.mu.Unlock()
	if job != other.id {
		t.Errorf("a job declared without allot.job_id is named %q, want the framework id %q", job, other.id)
	}
}

// recordOf is framework id's record in the registry.
func (h *harness) recordOf(id string) *api.FrameworkRecord {
	h.t.Helper()
	for _, rec := range h.m.reg.Frameworks() {
		if rec.Id == id {
			return rec
		}
	}
	h.t.Fatalf("no registry record for framework %s", id)
	return nil
}

// Bad job-size values answer 400 naming the label (or the REQUEST item's
// key), at SUBSCRIBE, UPDATE_FRAMEWORK and REQUEST alike; nothing changes
// and the master goes on serving.
func TestJobSizeBadValuesAnswer400(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Sorter = "fspy" })
	h.agent("cpus:4;mem:4096")
	good := known("g1", 1000, 2048)
	info := sizedInfo("good", good)
	fw := h.subscribeInfo("", info)
	for _, c := range []struct {
		name string
		kv   []string
		key  string
	}{
		{"size not a number", []string{api.JobSizeLabel, "ten", api.JobAPBLabel, "8"}, api.JobSizeLabel},
		{"size negative", []string{api.JobSizeLabel, "-5", api.JobAPBLabel, "8"}, api.JobSizeLabel},
		{"size NaN", []string{api.JobSizeLabel, "NaN", api.JobAPBLabel, "8"}, api.JobSizeLabel},
		{"size Inf", []string{api.JobSizeLabel, "Inf", api.JobAPBLabel, "8"}, api.JobSizeLabel},
		{"known size zero", []string{api.JobSizeLabel, "0", api.JobAPBLabel, "8"}, api.JobSizeLabel},
		{"kind", []string{api.JobSizeLabel, "5", api.JobSizeKindLabel, "maybe", api.JobAPBLabel, "8"}, api.JobSizeKindLabel},
		{"apb missing", []string{api.JobSizeLabel, "5"}, api.JobAPBLabel},
		{"apb negative", []string{api.JobSizeLabel, "5", api.JobAPBLabel, "-8"}, api.JobAPBLabel},
		{"apb below am", []string{api.JobSizeLabel, "5", api.JobAPBLabel, "8", api.JobAMLabel, "16"}, api.JobAMLabel},
		{"am NaN", []string{api.JobSizeLabel, "5", api.JobAPBLabel, "8", api.JobAMLabel, "NaN"}, api.JobAMLabel},
	} {
		var labels []mesos.Label
		var items []string
		for i := 0; i < len(c.kv); i += 2 {
			v := c.kv[i+1]
			labels = append(labels, mesos.Label{Key: c.kv[i], Value: &v})
			items = append(items, c.kv[i]+"="+v)
		}
		bad := info
		bad.Labels = &mesos.Labels{Labels: labels}
		t.Run(c.name+"/SUBSCRIBE", func(t *testing.T) {
			nfw := len(h.m.reg.Frameworks())
			code, body := h.httpSubscribe(bad)
			if code != http.StatusBadRequest || !strings.Contains(body, "SUBSCRIBE: label "+c.key+": ") {
				t.Errorf("SUBSCRIBE answered %d %q, want 400 naming label %s", code, body, c.key)
			}
			if n := len(h.m.reg.Frameworks()); n != nfw {
				t.Errorf("a refused SUBSCRIBE left %d frameworks in the registry, had %d", n, nfw)
			}
		})
		t.Run(c.name+"/UPDATE_FRAMEWORK", func(t *testing.T) {
			up := &scheduler.Call{Type: scheduler.Call_UPDATE_FRAMEWORK, UpdateFramework: &scheduler.Call_UpdateFramework{FrameworkInfo: bad}}
			checkBadRequest(t, h.call(fw, up), "UPDATE_FRAMEWORK: label "+c.key+": ")
		})
		t.Run(c.name+"/REQUEST", func(t *testing.T) {
			res := mesos.Resource{Name: api.JobSizeResourceName, Type: mesos.SET.Enum(), Set: &mesos.Value_Set{Item: items}}
			checkBadRequest(t, h.call(fw, jobSizeRequest(res)), "REQUEST: resource allot.job: "+c.key+": ")
		})
	}
	h.m.mu.Lock()
	f := h.m.frameworks[fw.id]
	kept, labels := f.jobSize, f.info.GetLabels()
	h.m.mu.Unlock()
	want := proto.Clone(good).(*api.JobSize)
	if !proto.Equal(kept, want) {
		t.Errorf("after the refused calls the declaration is %v, want %v", kept, want)
	}
	if js, _ := api.JobSizeFromLabels(labels); !proto.Equal(js, good) {
		t.Errorf("a refused UPDATE_FRAMEWORK changed the labels to %v", labels)
	}
	// still serving: the framework gets the agent, a new one subscribes
	h.offer(fw)
	h.subscribeInfo("", sizedInfo("after", known("x", 1, 1)))
}

func checkBadRequest(t *testing.T, err error, want string) {
	t.Helper()
	var he *api.HTTPError
	if !errors.As(err, &he) || he.Code != http.StatusBadRequest || !strings.Contains(he.Msg, want) {
		t.Errorf("error %v, want a 400 containing %q", err, want)
	}
}

// httpSubscribe posts a SUBSCRIBE with info to the scheduler endpoint and
// returns the status and body of an answer that is not a stream.
func (h *harness) httpSubscribe(info mesos.FrameworkInfo) (int, string) {
	h.t.Helper()
	call := scheduler.Call{Type: scheduler.Call_SUBSCRIBE, Subscribe: &scheduler.Call_Subscribe{FrameworkInfo: &info}}
	b, err := json.Marshal(&call)
	if err != nil {
		h.t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "/api/v1/scheduler", bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.m.handleScheduler(w, r)
	return w.Code, w.Body.String()
}

// A framework that declares itself a probe (allot.job_size_kind=probe) is
// served before the production jobs while probes fit in fspy's probing
// share, whatever their sizes: the probing queue of FSPY, reachable from
// the wire.
func TestJobSizeProbeLabelServedFirst(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Sorter = "fspy" })
	h.agent("cpus:8;mem:65536")
	// An unknown-size production job registered first would win a tie
	// with the probe were the probe just another job of unknown size.
	fws := map[string]*fakeFramework{}
	fws["unknown"] = h.subscribeInfo("", sizedInfo("unknown", &api.JobSize{Kind: api.JobSizeUnknown, ApbMb: 4096}))
	fws["small"] = h.subscribeInfo("", sizedInfo("small", known("s", 10, 4096)))
	fws["probe"] = h.subscribeInfo("", sizedInfo("probe", &api.JobSize{Kind: api.JobSizeProbe, ApbMb: 2048}))
	if got := h.offerOrder(fws); len(got) == 0 || got[0] != "probe" {
		t.Fatalf("offer order %v, want the probe first", got)
	}
}
