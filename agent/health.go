package agent

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/api/healthcheck"
)

// Health checks (TaskInfo.health_check) as Mesos's command and default
// executors run them. The state machine (healthMachine) is pure: it is fed
// each probe's result and the time, and says whether to report and whether
// to kill. healthChecker drives it with an injected clock and prober, so the
// whole loop is tested without sleeping; the probes (command, HTTP, TCP)
// touch the real world.

// healthPolicy is a check's timing with Mesos's defaults (delay 15 s,
// interval 10 s, timeout 20 s, grace period 10 s, 3 consecutive failures)
// where a field is unset.
type healthPolicy struct {
	delay, interval, timeout, grace time.Duration
	maxFailures                     uint32
}

func newHealthPolicy(hc *mesos.HealthCheck) healthPolicy {
	return healthPolicy{
		delay:       seconds(hc.GetDelaySeconds()),
		interval:    seconds(hc.GetIntervalSeconds()),
		timeout:     seconds(hc.GetTimeoutSeconds()),
		grace:       seconds(hc.GetGracePeriodSeconds()),
		maxFailures: hc.GetConsecutiveFailures(),
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// healthVerdict is what one probe result means for the task.
type healthVerdict struct {
	report   bool   // send TASK_RUNNING with healthy
	healthy  bool   // the value to report
	kill     bool   // consecutive failures reached the limit: kill the task
	failures uint32 // consecutive failures counted so far (0 when healthy)
	err      error  // the probe's failure; nil when it passed
}

// healthMachine is Mesos's HealthChecker logic (checks/health_checker.cpp):
// until the first success, failures within the grace period of the task's
// start are ignored; a success is reported when it is the first or follows
// failures; every counted failure is reported (healthy=false), and the
// failure that makes maxFailures in a row asks for the kill.
type healthMachine struct {
	policy       healthPolicy
	start        time.Time
	initializing bool // no success yet: the grace period still applies
	failures     uint32
}

func newHealthMachine(p healthPolicy, start time.Time) *healthMachine {
	return &healthMachine{policy: p, start: start, initializing: true}
}

func (m *healthMachine) observe(now time.Time, err error) healthVerdict {
	if err == nil {
		v := healthVerdict{report: m.initializing || m.failures > 0, healthy: true}
		m.initializing, m.failures = false, 0
		return v
	}
	if m.initializing && m.policy.grace > 0 && now.Sub(m.start) <= m.policy.grace {
		return healthVerdict{err: err}
	}
	m.failures++
	return healthVerdict{report: true, kill: m.failures >= m.policy.maxFailures, failures: m.failures, err: err}
}

// prober runs one check; nil means it passed. It must give up when ctx
// ends (the check's timeout, or the task's end).
type prober interface {
	probe(ctx context.Context) error
}

// healthChecker runs one task's checks: the first after the delay, each
// next one an interval after the previous ended, until ctx ends or a
// verdict asks for the kill. notify sees each verdict to report.
type healthChecker struct {
	policy  healthPolicy
	probe   prober
	clock   Clock
	machine *healthMachine
	notify  func(healthVerdict)
}

func newHealthChecker(hc *mesos.HealthCheck, p prober, clock Clock, notify func(healthVerdict)) *healthChecker {
	pol := newHealthPolicy(hc)
	return &healthChecker{policy: pol, probe: p, clock: clock, machine: newHealthMachine(pol, clock.Now()), notify: notify}
}

func (c *healthChecker) run(ctx context.Context) {
	if !c.wait(ctx, c.policy.delay) {
		return
	}
	for {
		err := c.once(ctx)
		if ctx.Err() != nil {
			return // the task ended during the probe: its result means nothing
		}
		v := c.machine.observe(c.clock.Now(), err)
		if v.report {
			c.notify(v)
		}
		if v.kill || !c.wait(ctx, c.policy.interval) {
			return
		}
	}
}

func (c *healthChecker) wait(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-c.clock.After(d):
		return true
	}
}

// once runs one probe under the check's timeout (zero: none, as Mesos).
func (c *healthChecker) once(ctx context.Context) error {
	if c.policy.timeout <= 0 {
		return c.probe.probe(ctx)
	}
	pctx, cancel := context.WithTimeout(ctx, c.policy.timeout)
	defer cancel()
	err := c.probe.probe(pctx)
	if err != nil && ctx.Err() == nil && errors.Is(pctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("timed out after %v", c.policy.timeout)
	}
	return err
}

// newProber builds the real probe of a validated check. A command runs in
// the task's sandbox dir with the task's environment env (plus the check's
// own variables).
func newProber(hc *mesos.HealthCheck, dir string, env []string, launch *nslaunch.Spec) prober {
	switch hc.Type {
	case mesos.HealthCheck_COMMAND:
		return commandProbe{cmd: hc.Command, dir: dir, env: env, launch: launch}
	case mesos.HealthCheck_HTTP:
		return newHTTPProbe(hc.HTTP)
	default:
		return tcpProbe{addr: healthcheck.Addr(hc.TCP.GetProtocol(), hc.TCP.Port)}
	}
}

// commandProbe passes when its command exits 0; with launch (the task's
// container), it runs in the task's container (cmdexec_container.go).
type commandProbe struct {
	cmd    *mesos.CommandInfo
	dir    string
	env    []string
	launch *nslaunch.Spec
}

func (p commandProbe) probe(ctx context.Context) error {
	var cmd *exec.Cmd
	if p.cmd.GetShell() {
		cmd = exec.CommandContext(ctx, "/bin/sh", "-c", p.cmd.GetValue())
	} else {
		args := p.cmd.Arguments
		if len(args) > 0 {
			args = args[1:]
		}
		cmd = exec.CommandContext(ctx, p.cmd.GetValue(), args...)
	}
	cmd.Dir = p.dir
	cmd.Env = append([]string{}, p.env...)
	if p.cmd.Environment != nil {
		for _, v := range p.cmd.Environment.Variables {
			cmd.Env = append(cmd.Env, v.Name+"="+v.GetValue())
		}
	}
	var pipes *nslaunch.Pipes
	if p.launch != nil {
		var err error
		if cmd, pipes, err = containedCheck(ctx, p.launch, cmd); err != nil {
			return err
		}
	}
	out := &tailBuffer{max: 256}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so a timeout kills what the shell forked too;
	// WaitDelay stops a grandchild holding the output pipe from keeping us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Start()
	if lerr := pipes.Started(err); err == nil && lerr != nil {
		cmd.Wait()
		return fmt.Errorf("the check could not start in the task's container: %v", lerr)
	}
	if err == nil {
		err = cmd.Wait()
	}
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	msg := err.Error()
	if errors.As(err, &ee) && ee.Exited() {
		msg = fmt.Sprintf("command exited with status %d", ee.ExitCode())
	}
	if o := strings.TrimSpace(out.String()); o != "" {
		msg += ": " + o
	}
	return errors.New(msg)
}

// tailBuffer keeps the last max bytes written to it: enough of a failing
// check's output to say why, however much it prints.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.ToValidUTF8(t.b, nil))
}

// httpProbe passes when a GET answers with one of statuses, or 200-399
// when none are given (Mesos's default executors ignore statuses; this
// one honours them, as the field's comment invites executors to).
type httpProbe struct {
	url      string
	statuses []uint32
	client   *http.Client
}

func newHTTPProbe(h *mesos.HealthCheck_HTTPCheckInfo) httpProbe {
	tr := &http.Transport{
		Proxy:             nil, // the task is on this host: never through an HTTP_PROXY
		DisableKeepAlives: true,
		// Mesos's checker runs curl -k: a task's certificate is rarely one
		// the executor could verify.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}
	return httpProbe{url: healthcheck.URL(h), statuses: h.Statuses, client: &http.Client{
		Transport: tr,
		// Redirects are not followed (nor does curl without -L): a 3xx is
		// the task's answer.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (p httpProbe) probe(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if !p.healthy(resp.StatusCode) {
		return fmt.Errorf("GET %s answered %s", p.url, resp.Status)
	}
	return nil
}

func (p httpProbe) healthy(code int) bool {
	if len(p.statuses) == 0 {
		return code >= 200 && code < 400
	}
	for _, s := range p.statuses {
		if int(s) == code {
			return true
		}
	}
	return false
}

// tcpProbe passes when a TCP connection to the port is accepted; dial,
// when set, makes the connection (in the task's network namespace).
type tcpProbe struct {
	addr string
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (p tcpProbe) probe(ctx context.Context) error {
	dial := p.dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	c, err := dial(ctx, "tcp", p.addr)
	if err != nil {
		return err
	}
	return c.Close()
}

var (
	_ prober = commandProbe{}
	_ prober = httpProbe{}
	_ prober = tcpProbe{}
)
