package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// rawFramework speaks the scheduler API with plain net/http and JSON, so a
// test controls every header and byte.
type rawFramework struct {
	addr, id, streamID string
	mu                 sync.Mutex
	offers             []mesos.Offer
	resp               *http.Response
}

func rawSubscribe(t *testing.T, addr string) *rawFramework {
	t.Helper()
	body := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"root","name":"raw"}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/scheduler", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Mesos-Stream-Id") == "" || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("SUBSCRIBE answered %s, stream id %q, content type %q", resp.Status, resp.Header.Get("Mesos-Stream-Id"), resp.Header.Get("Content-Type"))
	}
	f := &rawFramework{addr: addr, streamID: resp.Header.Get("Mesos-Stream-Id"), resp: resp}
	t.Cleanup(func() { resp.Body.Close() })
	r := recordio.NewReader(resp.Body)
	go func() {
		for {
			frame, err := r.ReadFrame()
			if err != nil {
				return
			}
			var e scheduler.Event
			if json.Unmarshal(frame, &e) != nil {
				continue
			}
			f.mu.Lock()
			switch e.Type {
			case scheduler.Event_SUBSCRIBED:
				f.id = e.Subscribed.FrameworkID.Value
			case scheduler.Event_OFFERS:
				f.offers = append(f.offers, e.Offers.Offers...)
			}
			f.mu.Unlock()
		}
	}()
	testcluster.WaitFor(t, 10*time.Second, "raw SUBSCRIBED", func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.id != "" })
	return f
}

func (f *rawFramework) offer(t *testing.T) mesos.Offer {
	t.Helper()
	var o mesos.Offer
	testcluster.WaitFor(t, 10*time.Second, "an offer", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.offers) == 0 {
			return false
		}
		o, f.offers = f.offers[0], f.offers[1:]
		return true
	})
	return o
}

// post sends a call as JSON with the framework's id and stream id.
func (f *rawFramework) post(t *testing.T, c *scheduler.Call) (int, string) {
	t.Helper()
	c.FrameworkID = &mesos.FrameworkID{Value: f.id}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return postRaw(t, f.addr, "/api/v1/scheduler", "application/json", b, map[string]string{"Mesos-Stream-Id": f.streamID})
}

// Every kind of bad input answers 4xx with a message naming the problem,
// and the master, the agents and other frameworks carry on.
func TestBadInputAnswers4xx(t *testing.T) {
	c := newCluster(t, 1)
	f := rawSubscribe(t, c.MasterAddr)
	o := f.offer(t)
	// One good launch, so a task id is in use; no filter on the rest, so it
	// is offered again at once.
	if code, msg := f.post(t, launch(o, cmdTask("busy", o, "sleep 30", 0.1, 32)).With(calls.RefuseSeconds(0))); code != http.StatusAccepted {
		t.Fatalf("good ACCEPT answered %d: %s", code, msg)
	}
	o2 := f.offer(t)
	pb := func(body []byte, hdr map[string]string) func() (int, string) {
		return func() (int, string) {
			return postRaw(t, c.MasterAddr, "/api/v1/scheduler", "application/x-protobuf", body, hdr)
		}
	}
	unknownType, _ := (&scheduler.Call{Type: 99, FrameworkID: &mesos.FrameworkID{Value: f.id}}).Marshal()
	revive, _ := (&scheduler.Call{Type: scheduler.Call_REVIVE, FrameworkID: &mesos.FrameworkID{Value: f.id}}).Marshal()
	huge := bytes.Repeat([]byte{'x'}, 16<<20+1)
	tests := []struct {
		name string
		do   func() (int, string)
		code int
		msg  string
	}{
		{"not protobuf", pb([]byte("\xff\xff\xff not a protobuf"), nil), 400, "failed to parse body"},
		{"not JSON", func() (int, string) {
			return postRaw(t, c.MasterAddr, "/api/v1/scheduler", "application/json", []byte("{not json"), nil)
		}, 400, "failed to parse body"},
		{"neither content type", func() (int, string) {
			return postRaw(t, c.MasterAddr, "/api/v1/scheduler", "text/plain", []byte("hello"), nil)
		}, 415, "neither application/x-protobuf nor application/json"},
		{"unknown call type", pb(unknownType, map[string]string{"Mesos-Stream-Id": f.streamID}), 400, "unknown call type 99"},
		{"over 16 MiB", func() (int, string) { return postExpectingContinue(t, c.MasterAddr, huge) }, 413, "exceeds the limit"},
		{"missing stream id", pb(revive, nil), 400, "missing Mesos-Stream-Id"},
		{"wrong stream id", pb(revive, map[string]string{"Mesos-Stream-Id": "not-it"}), 400, "does not match"},
		{"not subscribed", func() (int, string) {
			b, _ := (&scheduler.Call{Type: scheduler.Call_REVIVE, FrameworkID: &mesos.FrameworkID{Value: "nobody"}}).Marshal()
			return postRaw(t, c.MasterAddr, "/api/v1/scheduler", "application/x-protobuf", b, map[string]string{"Mesos-Stream-Id": f.streamID})
		}, 403, "not subscribed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, msg := tc.do()
			if code != tc.code || !strings.Contains(msg, tc.msg) {
				t.Errorf("answered %d %q, want %d with %q", code, msg, tc.code, tc.msg)
			}
		})
	}
	// An ACCEPT of a declined offer, a task id in use or a task bigger
	// than its offer is not bad input: Mesos answers 202 and reports the
	// tasks by status update (TestAcceptErrorsAsUpdates).
	// Nor is a reservation operation that cannot be carried out: Mesos
	// drops it and goes on with the call (here: nothing else), 202.
	if code, msg := f.post(t, calls.Accept(calls.OfferOperations{calls.OpReserve(scalar("cpus", 1))}.WithOffers(o2.ID)).With(calls.RefuseSeconds(0))); code != http.StatusAccepted {
		t.Errorf("ACCEPT with an invalid RESERVE answered %d %q, want 202", code, msg)
	}
	o2 = f.offer(t)
	if code, msg := f.post(t, calls.Decline(o2.ID)); code != http.StatusAccepted {
		t.Fatalf("DECLINE answered %d: %s", code, msg)
	}
	if code, msg := f.post(t, launch(o2, cmdTask("late", o2, "true", 0.1, 32))); code != http.StatusAccepted {
		t.Errorf("ACCEPT of a declined offer answered %d %q, want 202", code, msg)
	}
	// Everyone carries on: another framework runs a task to completion.
	other := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "bystander"})
	oo := other.takeOffer(t, "")
	if err := other.call(launch(oo, cmdTask("fine", oo, "true", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	other.waitState(t, "fine", mesos.TASK_FINISHED)
	if st := c.state(); len(st.Slaves) != 1 || !st.Slaves[0].Active {
		t.Errorf("agent not active after bad input: %+v", st.Slaves)
	}
}

// postExpectingContinue POSTs body to the scheduler API with "Expect:
// 100-continue", waiting as long as it takes for the master's interim
// answer. A server that refuses a body without reading it closes the
// connection, and a client still sending the body may see the reset before
// the answer; 100-continue is how HTTP lets the server refuse first.
func postExpectingContinue(t *testing.T, addr string, body []byte) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/scheduler", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Expect", "100-continue")
	tr := &http.Transport{ExpectContinueTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatalf("POST /api/v1/scheduler: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, strings.TrimSpace(string(b))
}
