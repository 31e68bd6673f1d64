package scalebench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// masterProc is one allot master process.
type masterProc struct {
	addr, raft string
	cmd        *exec.Cmd
	exited     chan struct{}
}

func (p *masterProc) pid() int { return p.cmd.Process.Pid }

func (p *masterProc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// freeAddr is a loopback address nobody listens on right now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// startMasters starts n masters (1: lone, else a raft cluster) of bin under
// dir, each logging to dir/master<i>.log, and waits for their /health.
func startMasters(ctx context.Context, cfg Config, dir string) ([]*masterProc, error) {
	ms := make([]*masterProc, cfg.Masters)
	var peers []string
	for i := range ms {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		ms[i] = &masterProc{addr: addr, exited: make(chan struct{})}
		if cfg.Masters > 1 {
			if ms[i].raft, err = freeAddr(); err != nil {
				return nil, err
			}
			peers = append(peers, ms[i].raft+"="+addr)
		}
	}
	for i, m := range ms {
		args := []string{"master", "--listen", m.addr, "--work-dir", filepath.Join(dir, fmt.Sprintf("master%d", i)),
			"--log-level", "warn", "--stamp-offers", "--allocation-interval", cfg.AllocationInterval.String(),
			"--agent-ping-timeout", "10m",
			// Every simulated agent and framework connects from 127.0.0.1:
			// one host, many clients.
			"--http-max-connections", "0", "--http-max-connections-per-host", "0"}
		if cfg.Masters > 1 {
			args = append(args, "--raft-addr", m.raft, "--peers", strings.Join(peers, ","), "--raft-multiplier", fmt.Sprint(max(cfg.RaftMultiplier, 1)))
		}
		if cfg.ProfilePath != "" {
			args = append(args, "--mutex-profile-fraction", "10")
		}
		args = append(args, cfg.MasterFlags...)
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("master%d.log", i)))
		if err != nil {
			return nil, err
		}
		m.cmd = exec.Command(cfg.Bin, args...)
		m.cmd.Stdout, m.cmd.Stderr = logf, logf
		m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := m.cmd.Start(); err != nil {
			logf.Close()
			stopMasters(ms[:i])
			return nil, err
		}
		go func(m *masterProc) { m.cmd.Wait(); logf.Close(); close(m.exited) }(m)
	}
	hc := &http.Client{Timeout: 2 * time.Second}
	for _, m := range ms {
		if err := waitHealth(ctx, hc, m); err != nil {
			stopMasters(ms)
			return nil, err
		}
	}
	return ms, nil
}

func waitHealth(ctx context.Context, hc *http.Client, m *masterProc) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if !m.alive() {
			return fmt.Errorf("master %s exited during start-up (see its log)", m.addr)
		}
		if resp, err := hc.Get("http://" + m.addr + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("master %s not healthy within 30 s", m.addr)
}

// stopMasters ends every master still running: SIGTERM, then SIGKILL after
// a few seconds.
func stopMasters(ms []*masterProc) {
	for _, m := range ms {
		if m != nil && m.cmd != nil && m.cmd.Process != nil && m.alive() {
			m.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, m := range ms {
		if m == nil || m.cmd == nil || m.cmd.Process == nil {
			continue
		}
		select {
		case <-m.exited:
		case <-time.After(5 * time.Second):
			m.cmd.Process.Kill()
			<-m.exited
		}
	}
}

// leaderOf asks each live master who leads (its /redirect) and returns the
// leader's address once one names a live master that agrees.
func leaderOf(ctx context.Context, hc *http.Client, ms []*masterProc, within time.Duration) (*masterProc, error) {
	if len(ms) == 1 {
		return ms[0], nil // a lone master leads once healthy
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		for _, m := range ms {
			if !m.alive() {
				continue
			}
			if l := askLeader(hc, m.addr); l != "" {
				for _, c := range ms {
					if c.addr == l && c.alive() {
						return c, nil
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("no leader within %v", within)
}

// askLeader is the leader master names on /redirect ("" if none).
func askLeader(hc *http.Client, addr string) string {
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get("http://" + addr + "/redirect")
	if err != nil {
		return ""
	}
	resp.Body.Close()
	loc := strings.TrimPrefix(resp.Header.Get("Location"), "//")
	if i := strings.IndexByte(loc, '/'); i >= 0 {
		loc = loc[:i]
	}
	if resp.StatusCode != http.StatusTemporaryRedirect {
		return ""
	}
	return loc
}
