package master

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/limits"
)

// serve sends one request through the master's whole handler (limits
// included) and returns the answer.
func serve(h http.Handler, ctx context.Context, method, path, body string, hdr map[string]string) *httptest.ResponseRecorder {
	var r io.Reader = strings.NewReader(body)
	if hdr["chunked"] != "" {
		r = io.MultiReader(r) // no length known: read until the cap trips
	}
	req := httptest.NewRequest(method, path, r).WithContext(ctx)
	if hdr["chunked"] != "" {
		req.ContentLength = -1
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestRequestBodyCap(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxRequestBytes = 1024 })
	handler := h.m.Handler()
	big := `{"type":"SUBSCRIBE","pad":"` + strings.Repeat("x", 2048) + `"}`
	tests := []struct {
		name, path, body string
		chunked          bool
		want             int
	}{
		{"scheduler over", "/api/v1/scheduler", big, false, 413},
		{"scheduler chunked over", "/api/v1/scheduler", big, true, 413},
		{"operator over", "/api/v1", big, false, 413},
		{"sorter over", SorterPath, big, false, 413},
		{"scheduler under", "/api/v1/scheduler", `{"type":"SUBSCRIBE"}`, false, 400},
		// The agent protocol keeps 16 MiB and a restore --max-snapshot-bytes: neither
		// is cut at the client cap (they fail later, as not protobuf and not
		// a snapshot).
		{"agent protocol keeps its cap", AgentPath, big, false, 400},
		{"snapshot restore keeps its cap", SnapshotPath, big, false, 400},
	}
	rejected := 0
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{}
			if tt.chunked {
				hdr["chunked"] = "1"
			}
			rec := serve(handler, context.Background(), http.MethodPost, tt.path, tt.body, hdr)
			if rec.Code != tt.want {
				t.Fatalf("%s: %d %q, want %d", tt.path, rec.Code, rec.Body, tt.want)
			}
			if tt.want == 413 {
				rejected++
				if !strings.Contains(rec.Body.String(), "limit of 1024 bytes") {
					t.Errorf("413 body %q does not name the limit", rec.Body)
				}
			}
		})
	}
	if got := testutil.ToFloat64(h.m.lim.bodies); got != float64(rejected) {
		t.Errorf("bodies rejected metric = %v, want %d", got, rejected)
	}
}

// subscribed admits a framework with a principal, as SUBSCRIBE would.
func (h *harness) subscribed(name, principal string) *fakeFramework {
	h.t.Helper()
	s := newFakeStream(h.t, 0)
	info := mesos.FrameworkInfo{User: "test", Name: name, Principal: &principal}
	if principal == "" {
		info.Principal = nil
	}
	id, sid, err := h.m.admitFramework("", info, nil, s.Stream)
	if err != nil {
		h.t.Fatal(err)
	}
	return &fakeFramework{id: id, streamID: sid, fakeStream: s}
}

// reviveHTTP sends REVIVE for fw through the handler.
func reviveHTTP(handler http.Handler, ctx context.Context, fw *fakeFramework) *httptest.ResponseRecorder {
	body := fmt.Sprintf(`{"type":"REVIVE","framework_id":{"value":%q}}`, fw.id)
	return serve(handler, ctx, http.MethodPost, "/api/v1/scheduler", body, map[string]string{headerStreamID: fw.streamID})
}

func TestSchedulerRateLimits(t *testing.T) {
	rl, err := limits.ParseRateLimits([]byte(`{"limits":[{"principal":"flood","qps":1,"capacity":2},{"principal":"free"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(c *Config) { c.RateLimits = rl })
	handler := h.m.Handler()
	flood, calm := h.subscribed("flood", "flood"), h.subscribed("calm", "")
	bg := context.Background()

	for i, want := range []int{202, 202, 429, 429} {
		if rec := reviveHTTP(handler, bg, flood); rec.Code != want {
			t.Fatalf("flood call %d: %d %q, want %d", i, rec.Code, rec.Body, want)
		}
	}
	rec := reviveHTTP(handler, bg, flood)
	if ra := rec.Header().Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After = %q, want 1", ra)
	}
	for _, s := range []string{`principal "flood"`, "FrameworkInfo.principal", "1 qps, capacity 2"} {
		if !strings.Contains(rec.Body.String(), s) {
			t.Errorf("429 body %q does not say %q", rec.Body, s)
		}
	}
	// Another framework, without a principal and with no aggregate
	// default, is not held back by flood's limit.
	for i := 0; i < 20; i++ {
		if rec := reviveHTTP(handler, bg, calm); rec.Code != 202 {
			t.Fatalf("calm call %d: %d %q", i, rec.Code, rec.Body)
		}
	}
	// An authenticated principal wins over FrameworkInfo.principal.
	if rec := reviveHTTP(handler, auth.WithPrincipal(bg, "flood"), calm); rec.Code != 429 {
		t.Errorf("calm's call as authenticated flood: %d, want 429", rec.Code)
	}
	if rec := reviveHTTP(handler, auth.WithPrincipal(bg, "free"), calm); rec.Code != 202 {
		t.Errorf("calm's framework authenticated as the unlimited free: %d, want 202", rec.Code)
	}
	// flood's own framework cannot be driven by another principal at all
	// (authn.go): refused before any budget is spent on it.
	if rec := reviveHTTP(handler, auth.WithPrincipal(bg, "free"), flood); rec.Code != 403 {
		t.Errorf("flood's framework authenticated as free: %d, want 403", rec.Code)
	}
	// A second later flood has a token again.
	h.clock.Advance(time.Second)
	if rec := reviveHTTP(handler, bg, flood); rec.Code != 202 {
		t.Errorf("flood a second later: %d %q", rec.Code, rec.Body)
	}
	if got := testutil.ToFloat64(h.m.lim.throttle.WithLabelValues("flood", "rate")); got != 4 {
		t.Errorf("throttled{flood,rate} = %v, want 4", got)
	}
}

// Operator routes are charged in the middleware; a caller without a
// principal shares the aggregate default. /health and /metrics never are.
func TestOperatorRateLimits(t *testing.T) {
	rl, _ := limits.ParseRateLimits([]byte(`{"limits":[{"principal":"ops","qps":100}],"aggregate_default_qps":0.5,"aggregate_default_capacity":1}`))
	h := newHarness(t, func(c *Config) { c.RateLimits = rl })
	handler := h.m.Handler()
	bg := context.Background()
	if rec := serve(handler, bg, http.MethodGet, "/version", "", nil); rec.Code != 200 {
		t.Fatalf("first /version: %d", rec.Code)
	}
	rec := serve(handler, bg, http.MethodGet, "/version", "", nil)
	if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" ||
		!strings.Contains(rec.Body.String(), "without a principal, charged to the aggregate default") ||
		!strings.Contains(rec.Body.String(), "0.5 qps, capacity 1") {
		t.Fatalf("second /version: %d Retry-After %q %q", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
	}
	// An unlisted authenticated principal shares the same bucket.
	if rec := serve(handler, auth.WithPrincipal(bg, "someone"), http.MethodGet, "/version", "", nil); rec.Code != 429 {
		t.Errorf("unlisted principal: %d, want 429", rec.Code)
	}
	if rec := serve(handler, auth.WithPrincipal(bg, "ops"), http.MethodGet, "/version", "", nil); rec.Code != 200 {
		t.Errorf("listed principal ops: %d, want 200", rec.Code)
	}
	for _, p := range []string{"/health", "/metrics"} {
		for i := 0; i < 5; i++ {
			if rec := serve(handler, bg, http.MethodGet, p, "", nil); rec.Code != 200 {
				t.Fatalf("%s throttled: %d", p, rec.Code)
			}
		}
	}
	if got := testutil.ToFloat64(h.m.lim.throttle.WithLabelValues(limits.DefaultGroup, "rate")); got != 2 {
		t.Errorf("throttled{(default),rate} = %v, want 2", got)
	}
}

// openStream POSTs a subscription and returns the answer, its body left
// open (a stream) for the caller to close.
func openStream(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestSubscriptionCap(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.MaxSubscriptionsPerPrincipal = 1 })
	srv := httptest.NewServer(h.m.Handler())
	t.Cleanup(srv.Close)
	sub := func(name, principal string) string {
		return fmt.Sprintf(`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":%q,"principal":%q}}}`, name, principal)
	}
	sched := srv.URL + "/api/v1/scheduler"
	first := openStream(t, sched, sub("a", "p"))
	if first.StatusCode != 200 {
		t.Fatalf("first SUBSCRIBE of p: %d", first.StatusCode)
	}
	second := openStream(t, sched, sub("b", "p"))
	b, _ := io.ReadAll(second.Body)
	if second.StatusCode != 429 || !strings.Contains(string(b), `"p" already has 1 subscription streams open`) {
		t.Fatalf("second SUBSCRIBE of p: %d %q, want 429 naming p", second.StatusCode, b)
	}
	if other := openStream(t, sched, sub("c", "q")); other.StatusCode != 200 {
		t.Fatalf("SUBSCRIBE of q: %d", other.StatusCode)
	}
	op := srv.URL + "/api/v1"
	if o := openStream(t, op, `{"type":"SUBSCRIBE"}`); o.StatusCode != 200 {
		t.Fatalf("operator SUBSCRIBE: %d", o.StatusCode)
	}
	if o := openStream(t, op, `{"type":"SUBSCRIBE"}`); o.StatusCode != 429 {
		t.Fatalf("second anonymous operator SUBSCRIBE from the same host: %d, want 429", o.StatusCode)
	}
	if got := testutil.ToFloat64(h.m.lim.open.WithLabelValues("p")); got != 1 {
		t.Errorf("open streams{p} = %v, want 1", got)
	}
	// Closing p's stream frees its slot.
	first.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for h.m.lim.streams.Open("p") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("p's closed stream still counted after 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if again := openStream(t, sched, sub("d", "p")); again.StatusCode != 200 {
		t.Fatalf("SUBSCRIBE of p after its stream closed: %d", again.StatusCode)
	}
	if got := testutil.ToFloat64(h.m.lim.throttle.WithLabelValues(limits.DefaultGroup, "streams")); got != 2 {
		t.Errorf("throttled{(default),streams} = %v, want 2", got)
	}
}

// A call carrying the Mesos-Stream-Id of an open subscription is charged to
// that subscription's principal before its body is read: once the bucket is
// empty even an undecodable body is answered 429, not 400.
func TestSchedulerChargedByStreamID(t *testing.T) {
	rl, _ := limits.ParseRateLimits([]byte(`{"limits":[{"principal":"flood","qps":1,"capacity":2}]}`))
	h := newHarness(t, func(c *Config) { c.RateLimits = rl })
	srv := httptest.NewServer(h.m.Handler())
	t.Cleanup(srv.Close)
	sched := srv.URL + "/api/v1/scheduler"
	resp := openStream(t, sched, `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"f","principal":"flood"}}}`)
	sid := resp.Header.Get(headerStreamID)
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("SUBSCRIBE: %d, stream id %q", resp.StatusCode, sid)
	}
	// SUBSCRIBE took one token.
	for i, want := range []int{400, 429, 429} {
		req, _ := http.NewRequest(http.MethodPost, sched, strings.NewReader("not a call"))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(headerStreamID, sid)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != want {
			t.Fatalf("call %d: %d %q, want %d", i, r.StatusCode, b, want)
		}
	}
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, known := h.m.lim.byStream.Load(sid); !known {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed stream's id is still mapped to its principal")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
