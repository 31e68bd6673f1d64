package agent

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

var errProbe = errors.New("probe failed")

// step is one probe result fed to the machine at an offset from the start.
type step struct {
	at time.Duration
	ok bool
}

func TestHealthMachine(t *testing.T) {
	pol := healthPolicy{grace: 10 * time.Second, maxFailures: 3}
	// want: per step, "-" nothing reported, "H" healthy reported, "U<n>"
	// unhealthy with n failures, "K<n>" unhealthy and kill.
	for _, c := range []struct {
		name  string
		pol   healthPolicy
		steps []step
		want  []string
	}{
		{"first success reported once", pol, []step{{1 * time.Second, true}, {2 * time.Second, true}, {3 * time.Second, true}},
			[]string{"H", "-", "-"}},
		{"failures in grace ignored", pol, []step{{1 * time.Second, false}, {5 * time.Second, false}, {10 * time.Second, false}, {11 * time.Second, false}},
			[]string{"-", "-", "-", "U1"}},
		{"three after grace kill", pol, []step{{11 * time.Second, false}, {12 * time.Second, false}, {13 * time.Second, false}},
			[]string{"U1", "U2", "K3"}},
		{"success ends grace", pol, []step{{1 * time.Second, true}, {2 * time.Second, false}, {3 * time.Second, false}, {4 * time.Second, false}},
			[]string{"H", "U1", "U2", "K3"}},
		{"success resets count and is reported", pol, []step{{11 * time.Second, false}, {12 * time.Second, false}, {13 * time.Second, true}, {14 * time.Second, false}, {15 * time.Second, true}, {16 * time.Second, true}},
			[]string{"U1", "U2", "H", "U1", "H", "-"}},
		{"no grace", healthPolicy{maxFailures: 2}, []step{{0, false}, {time.Second, false}},
			[]string{"U1", "K2"}},
		{"one failure allowed", healthPolicy{maxFailures: 1}, []step{{0, true}, {time.Second, false}},
			[]string{"H", "K1"}},
		{"zero consecutive failures kills on the first", healthPolicy{maxFailures: 0}, []step{{0, false}},
			[]string{"K1"}},
	} {
		start := time.Unix(1000, 0)
		m := newHealthMachine(c.pol, start)
		var got []string
		for _, s := range c.steps {
			var err error
			if !s.ok {
				err = errProbe
			}
			got = append(got, verdictCode(m.observe(start.Add(s.at), err)))
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: verdicts %v, want %v", c.name, got, c.want)
		}
	}
}

func verdictCode(v healthVerdict) string {
	switch {
	case !v.report:
		return "-"
	case v.healthy:
		return "H"
	case v.kill:
		return "K" + strconv.Itoa(int(v.failures))
	default:
		return "U" + strconv.Itoa(int(v.failures))
	}
}

func TestHealthPolicyDefaults(t *testing.T) {
	got := newHealthPolicy(&mesos.HealthCheck{Type: mesos.HealthCheck_TCP})
	want := healthPolicy{delay: 15 * time.Second, interval: 10 * time.Second, timeout: 20 * time.Second, grace: 10 * time.Second, maxFailures: 3}
	if got != want {
		t.Errorf("defaults %+v, want Mesos's %+v", got, want)
	}
	half, five := 0.5, uint32(5)
	got = newHealthPolicy(&mesos.HealthCheck{DelaySeconds: &half, IntervalSeconds: &half, TimeoutSeconds: &half, GracePeriodSeconds: &half, ConsecutiveFailures: &five})
	if got.delay != 500*time.Millisecond || got.interval != 500*time.Millisecond || got.grace != 500*time.Millisecond || got.maxFailures != 5 {
		t.Errorf("explicit %+v", got)
	}
}

// fakeClock advances by exactly what is waited for, at once.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.now = c.now.Add(d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// AfterFunc runs f at once, the clock moved on by d.
func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.now = c.now.Add(d)
	f()
	return stoppedTimer{}
}

type stoppedTimer struct{}

func (stoppedTimer) Stop() bool { return false }

// scriptProbe answers from a script ("." pass, "x" fail) and records when
// it ran; past the script's end it cancels the run.
type scriptProbe struct {
	clock  *fakeClock
	script string
	at     []time.Duration
	start  time.Time
	cancel context.CancelFunc
}

func (p *scriptProbe) probe(ctx context.Context) error {
	n := len(p.at)
	p.at = append(p.at, p.clock.now.Sub(p.start))
	if n >= len(p.script) {
		p.cancel()
		return nil
	}
	if p.script[n] == 'x' {
		return errProbe
	}
	return nil
}

func TestHealthCheckerLoop(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	hc := &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, DelaySeconds: f(2), IntervalSeconds: f(3), GracePeriodSeconds: f(6)}
	for _, c := range []struct {
		name   string
		script string
		probes string // offsets of probes, seconds
		codes  string // verdicts notified
	}{
		// Probes at 2, 5, 8, 11 s: the 2 and 5 s failures are in the grace period.
		{"killed after grace", "xxxxx", "2 5 8 11 14", "U1 U2 K3"},
		{"healthy then stopped by the task's end", "..", "2 5 8", "H"},
		{"flapping", ".x.xxx", "2 5 8 11 14 17", "H U1 H U1 U2 K3"},
	} {
		clock := &fakeClock{now: time.Unix(0, 0)}
		ctx, cancel := context.WithCancel(context.Background())
		p := &scriptProbe{clock: clock, script: c.script, start: clock.now, cancel: cancel}
		var codes []string
		chk := newHealthChecker(hc, p, clock, func(v healthVerdict) { codes = append(codes, verdictCode(v)) })
		chk.run(ctx)
		cancel()
		var at []string
		for _, d := range p.at {
			at = append(at, strconv.Itoa(int(d/time.Second)))
		}
		if strings.Join(at, " ") != c.probes {
			t.Errorf("%s: probes at %v s, want %s", c.name, at, c.probes)
		}
		if strings.Join(codes, " ") != c.codes {
			t.Errorf("%s: verdicts %v, want %s", c.name, codes, c.codes)
		}
	}
}

func TestHealthCheckerTimeout(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	hc := &mesos.HealthCheck{Type: mesos.HealthCheck_COMMAND, TimeoutSeconds: f(0.05)}
	chk := newHealthChecker(hc, proberFunc(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }), wallClock{}, nil)
	if err := chk.once(context.Background()); err == nil || !strings.Contains(err.Error(), "timed out after 50ms") {
		t.Errorf("once = %v, want a timeout", err)
	}
}

type proberFunc func(context.Context) error

func (f proberFunc) probe(ctx context.Context) error { return f(ctx) }

func TestCommandProbe(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok"), nil, 0o644)
	sh := func(s string) *mesos.CommandInfo { return &mesos.CommandInfo{Value: &s} }
	no := false
	for _, c := range []struct {
		cmd  *mesos.CommandInfo
		env  []string
		want string // "" passes
	}{
		{sh("test -f ok"), nil, ""},
		{sh("test -f missing"), nil, "command exited with status 1"},
		{sh(`test "$FOO" = bar`), []string{"FOO=bar"}, ""},
		{sh("echo broken >&2; exit 3"), nil, "command exited with status 3: broken"},
		{&mesos.CommandInfo{Value: strPtr("/bin/sh"), Shell: &no, Arguments: []string{"sh", "-c", "exit 4"}}, nil, "status 4"},
		{&mesos.CommandInfo{Value: strPtr("/no/such/binary"), Shell: &no}, nil, "no such file"},
	} {
		err := commandProbe{cmd: c.cmd, dir: dir, env: c.env}.probe(context.Background())
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: probe = %v, want %q", c.cmd.GetValue(), err, c.want)
		}
	}
	// A timeout kills the shell's children too, promptly.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	began := time.Now()
	if err := (commandProbe{cmd: sh("sleep 30 & sleep 30"), dir: dir}).probe(ctx); err == nil {
		t.Error("a probe past its timeout passed")
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("a timed-out probe took %v to return", d)
	}
}

func TestHTTPProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if code == 0 {
			code = 200
		}
		if code == 302 {
			w.Header().Set("Location", "/500")
		}
		w.WriteHeader(code)
	}))
	defer srv.Close()
	port := uint32(srv.Listener.Addr().(*net.TCPAddr).Port)
	for _, c := range []struct {
		path     string
		statuses []uint32
		ok       bool
	}{
		{"/", nil, true}, {"/204", nil, true}, {"/302", nil, true}, {"/404", nil, false}, {"/500", nil, false},
		{"/404", []uint32{404}, true}, {"/200", []uint32{204}, false},
	} {
		p := newHTTPProbe(&mesos.HealthCheck_HTTPCheckInfo{Port: port, Path: strPtr(c.path), Statuses: c.statuses})
		err := p.probe(context.Background())
		if (err == nil) != c.ok {
			t.Errorf("GET %s statuses %v: %v, want ok=%v", c.path, c.statuses, err, c.ok)
		}
	}
	srv.Close()
	p := newHTTPProbe(&mesos.HealthCheck_HTTPCheckInfo{Port: port})
	if err := p.probe(context.Background()); err == nil {
		t.Error("a closed server passed its HTTP check")
	}
}

func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := (tcpProbe{addr: addr}).probe(context.Background()); err != nil {
		t.Errorf("open port: %v", err)
	}
	l.Close()
	if err := (tcpProbe{addr: addr}).probe(context.Background()); err == nil {
		t.Error("a closed port passed its TCP check")
	}
}
