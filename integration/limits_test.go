package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// The flood test: one principal sending scheduler calls in a tight loop is
// throttled (429s, counted by the master) while another framework goes on
// launching. The victim's launch latency, ACCEPT to TASK_RUNNING, with and
// without the flood is logged as a figure, not asserted: on a small host
// the flooding client's own CPU competes with the victim's executors, so
// the ratio says as much about the host as about the limits.
//
// Principals: both frameworks authenticate (--authenticate-frameworks,
// HTTP Basic), so the master charges each call to the principal its
// credential proves, not to FrameworkInfo.principal, which a client can
// fill with anything.
func TestFloodIsThrottled(t *testing.T) {
	const qps, capacity = 20, 20
	rates := fmt.Sprintf(`{"limits":[{"principal":"flood","qps":%d,"capacity":%d}]}`, qps, capacity)
	creds := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(creds, []byte(`{"credentials":[{"principal":"flood","secret":"flood-secret"},{"principal":"victim","secret":"victim-secret"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Info logs: debug lines for every call would make the master's log,
	// not its limits, what the flood measures. Executors get 30 s to
	// subscribe, not the suite's 3 s: on a loaded shared host a command
	// executor has taken longer to start, and a launch that fails for that
	// says nothing about the flood.
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 2,
		MasterFlags: []string{"--rate-limits", rates, "--credentials", creds, "--authenticate-frameworks", "--log-level", "info"},
		AgentFlags:  append(append([]string{}, agentFlags...), "--executor-registration-timeout", "30s")})}
	flood := floodSubscribe(t, c.MasterAddr, "flood-secret")
	launchOnce := victimLauncher(t, c.MasterAddr, "victim-secret")

	// The flood runs in one tight loop, on only while flooding is set; idle
	// says the loop saw it unset and has no call in flight. Launches with
	// and without it alternate, so a change in the shared machine's load
	// during the test falls on both alike.
	var flooding, idle atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ok, throttled, other atomic.Int64
	var sample atomic.Value // one 429's Retry-After and body
	floodStart := time.Now()
	wg.Add(1)
	go func() {
		defer wg.Done()
		flood.loop(stop, &flooding, &idle, &ok, &throttled, &other, &sample)
	}()
	const rounds = 9
	var quiet, flooded []time.Duration
	for i := 0; i < rounds; i++ {
		flooding.Store(false)
		testcluster.WaitFor(t, 15*time.Second, "the flood to stop", idle.Load)
		quiet = append(quiet, launchOnce(fmt.Sprintf("quiet-%d", i)))
		flooding.Store(true)
		// A 429 since the flood came on: its bucket is empty.
		n := throttled.Load()
		testcluster.WaitFor(t, 15*time.Second, "a 429 to the flood", func() bool { return throttled.Load() > n })
		flooded = append(flooded, launchOnce(fmt.Sprintf("flooded-%d", i)))
	}
	close(stop)
	wg.Wait()
	elapsed := time.Since(floodStart)
	unloaded, loaded := median(quiet), median(flooded)
	t.Logf("launch latencies without the flood %v, with it %v", quiet, flooded)
	t.Logf("flood: %d accepted, %d throttled (429), %d other in %v (on during the flooded launches); victim median launch %v unloaded, %v under the flood",
		ok.Load(), throttled.Load(), other.Load(), elapsed.Round(time.Millisecond), unloaded, loaded)
	if throttled.Load() == 0 {
		t.Fatal("the flood was never answered 429")
	}
	if other.Load() != 0 {
		t.Errorf("%d flood calls answered neither 202 nor 429", other.Load())
	}
	// The limit holds: what got through is the bucket plus its refill
	// (half a second of slack for the clocks of client and master).
	if max := int64(capacity + qps*(elapsed.Seconds()+0.5)); ok.Load() > max {
		t.Errorf("%d flood calls accepted in %v; a %d qps, capacity %d limit allows %d", ok.Load(), elapsed, qps, capacity, max)
	}
	if s, _ := sample.Load().(string); !strings.HasPrefix(s, "Retry-After 1: ") || !strings.Contains(s, `principal "flood"`) ||
		!strings.Contains(s, "20 qps, capacity 20") {
		t.Errorf("a 429 said %q; want Retry-After 1 and a body naming principal \"flood\" and its limit", s)
	}
	series := `allot_master_throttled_requests_total{principal="flood",reason="rate"}`
	if got := c.Metric(series); got != float64(throttled.Load()) {
		t.Errorf("%s = %v, the flood counted %d 429s", series, got, throttled.Load())
	}
	t.Logf("victim's median launch latency under the flood / without it: %.2fx", float64(loaded)/float64(unloaded))
}

// floodFramework is the flooding scheduler: raw JSON over net/http so its
// loop costs the client little and every answer is seen.
type floodFramework struct {
	addr, secret, id, streamID string
	client                     *http.Client
}

// floodSubscribe subscribes as principal "flood" (authenticated with
// secret) with its role suppressed, so it holds no offers the victim
// needs, and drains its event stream.
func floodSubscribe(t *testing.T, addr, secret string) *floodFramework {
	t.Helper()
	body := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"root","name":"flood","principal":"flood"},"suppressed_roles":["*"]}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/scheduler", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("flood", secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("flood SUBSCRIBE: %s %s", resp.Status, b)
	}
	f := &floodFramework{addr: addr, secret: secret, streamID: resp.Header.Get("Mesos-Stream-Id"),
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	t.Cleanup(f.client.CloseIdleConnections)
	ids := make(chan string, 1)
	go func() {
		r := recordio.NewReader(resp.Body)
		for {
			frame, err := r.ReadFrame()
			if err != nil {
				return
			}
			var e scheduler.Event
			if json.Unmarshal(frame, &e) == nil && e.Type == scheduler.Event_SUBSCRIBED {
				ids <- e.Subscribed.FrameworkID.Value
			}
		}
	}()
	select {
	case f.id = <-ids:
	case <-time.After(15 * time.Second):
		t.Fatal("flood: no SUBSCRIBED")
	}
	return f
}

// loop sends SUPPRESS as fast as answers come while on is set, until stop,
// at most 60 s or 100,000 calls, counting 202s, 429s and anything else. It
// sets idle while it waits for on, with no call in flight.
func (f *floodFramework) loop(stop <-chan struct{}, on, idle *atomic.Bool, ok, throttled, other *atomic.Int64, sample *atomic.Value) {
	body := fmt.Sprintf(`{"type":"SUPPRESS","framework_id":{"value":%q}}`, f.id)
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; i < 100_000 && time.Now().Before(deadline); i++ {
		select {
		case <-stop:
			return
		default:
		}
		if !on.Load() {
			idle.Store(true)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		idle.Store(false)
		req, _ := http.NewRequest(http.MethodPost, "http://"+f.addr+"/api/v1/scheduler", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Mesos-Stream-Id", f.streamID)
		req.SetBasicAuth("flood", f.secret)
		resp, err := f.client.Do(req)
		if err != nil {
			other.Add(1)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusAccepted:
			ok.Add(1)
		case http.StatusTooManyRequests:
			throttled.Add(1)
			sample.CompareAndSwap(nil, "Retry-After "+resp.Header.Get("Retry-After")+": "+string(b))
		default:
			other.Add(1)
		}
	}
}

// median of ds (sorted in place).
func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

// victimLauncher subscribes the framework whose launches the flood test
// times (authenticated as principal "victim", not listed: not throttled)
// through mesos-go's client and Basic auth, and returns a func that
// launches one task on its next offer and returns the time from sending
// ACCEPT to the task's TASK_RUNNING.
func victimLauncher(t *testing.T, addr, secret string) func(id string) time.Duration {
	var mu sync.Mutex
	running := map[string]chan mesos.TaskStatus{} // RUNNING, or the end, of each task
	victim := subscribeWith(t, basicCaller(addr, "victim", secret),
		mesos.FrameworkInfo{Name: "victim", Principal: strp("victim")},
		func(st mesos.TaskStatus) {
			if s := st.GetState(); s == mesos.TASK_STAGING || s == mesos.TASK_STARTING {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if ch := running[st.TaskID.Value]; ch != nil {
				ch <- st
				delete(running, st.TaskID.Value)
			}
		})
	return func(id string) time.Duration {
		o := victim.takeOffer(t, "")
		ch := make(chan mesos.TaskStatus, 1)
		mu.Lock()
		running[id] = ch
		mu.Unlock()
		start := time.Now()
		// Refuse nothing: the offer's rest comes back at the next cycle,
		// not after Mesos's default 5 s filter.
		if err := victim.call(launch(o, cmdTask(id, o, "sleep 60", 0.05, 16)).With(calls.RefuseSeconds(0))); err != nil {
			t.Fatalf("%s: ACCEPT: %v", id, err)
		}
		select {
		case st := <-ch:
			if st.GetState() != mesos.TASK_RUNNING {
				t.Fatalf("%s: %v (%v: %s) instead of TASK_RUNNING", id, st.GetState(), st.GetReason(), st.GetMessage())
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: no update within 60 s", id)
		}
		return time.Since(start)
	}
}
