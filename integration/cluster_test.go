package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	allotBin   string // the allot binary under test
	testExec   string // the mesos-go custom executor
	mshBin     string // mesos-go's msh
	mwatchBin  string // mesos-go's mwatch
	binDir     string
	buildError error
)

func TestMain(m *testing.M) {
	var err error
	binDir, err = os.MkdirTemp("", "allot-integration-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	allotBin = filepath.Join(binDir, "allot")
	testExec = filepath.Join(binDir, "testexec")
	mshBin = filepath.Join(binDir, "msh")
	mwatchBin = filepath.Join(binDir, "mwatch")
	for _, b := range [][2]string{{allotBin, "../cmd/allot"}, {testExec, "./testexec"},
		{mshBin, "github.com/mesos/mesos-go/api/v1/cmd/msh"}, {mwatchBin, "github.com/mesos/mesos-go/api/v1/cmd/mwatch"}} {
		args := []string{"build", "-o", b[0]}
		if os.Getenv("ALLOT_RACE") != "" && b[0] == allotBin {
			// ALLOT_RACE=1: masters and agents run with the race detector;
			// a race fails the test that saw it (see startProc).
			args = append(args, "-race")
		}
		cmd := exec.Command(goTool(), append(args, b[1])...)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", b[1], err)
			os.RemoveAll(binDir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// goTool finds the go command: on PATH, else in the GOROOT this test was
// built with (a go test run by absolute path need not have go on PATH).
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// waitFor polls cond every 10ms until it holds or timeout passes; then it
// fails the test saying what it waited for.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// proc is a process started by a test, in its own process group.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *lockedBuf
	done chan struct{}
}

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startProc(t testing.TB, name string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), env...)
	p := &proc{name: name, cmd: cmd, out: &lockedBuf{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.kill(syscall.SIGKILL)
		if strings.Contains(p.out.String(), "WARNING: DATA RACE") {
			t.Errorf("%s reported a data race", name)
		}
		if t.Failed() {
			t.Logf("--- output of %s ---\n%s", name, tail(p.out.String(), 6000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func (p *proc) kill(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	syscall.Kill(-p.cmd.Process.Pid, sig)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// cluster is a master and agents on loopback.
type cluster struct {
	t      testing.TB
	dir    string
	master *proc
	maddr  string
	mflags []string
	agents []*agentProc
}

type agentProc struct {
	*proc
	addr, dir, res string
}

func newCluster(t testing.TB, agents int, masterFlags ...string) *cluster {
	t.Helper()
	dir := t.TempDir()
	c := &cluster{t: t, dir: dir, maddr: freePort(t), mflags: masterFlags}
	t.Cleanup(func() {
		killSandboxProcesses(dir)
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(dir, "agent*", "slaves", "*", "frameworks", "*", "executors", "*", "runs", "*", "std*"))
			for _, l := range logs {
				if b, err := os.ReadFile(l); err == nil && len(b) > 0 {
					t.Logf("--- %s ---\n%s", strings.TrimPrefix(l, dir), tail(string(b), 2000))
				}
			}
		}
	})
	c.startMaster()
	for i := 0; i < agents; i++ {
		c.addAgent("cpus:4;mem:4096;disk:10000;ports:[31000-32000]")
	}
	c.waitAgents(agents)
	return c
}

func (c *cluster) startMaster() {
	args := append([]string{allotBin, "master", "--listen", c.maddr, "--work-dir", filepath.Join(c.dir, "master"),
		"--allocation-interval", "100ms", "--heartbeat-interval", "2s", "--log-level", "debug"}, c.mflags...)
	c.master = startProc(c.t, "master", nil, args...)
	waitFor(c.t, 30*time.Second, "master /health", func() bool {
		resp, err := http.Get("http://" + c.maddr + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

func (c *cluster) addAgent(res string) *agentProc {
	i := len(c.agents)
	a := &agentProc{addr: freePort(c.t), dir: filepath.Join(c.dir, "agent"+strconv.Itoa(i)), res: res}
	c.agents = append(c.agents, a)
	c.startAgent(a)
	return a
}

func (c *cluster) startAgent(a *agentProc) {
	a.proc = startProc(c.t, "agent-"+a.addr, nil, allotBin, "agent", "--master", c.maddr, "--listen", a.addr,
		"--work-dir", a.dir, "--resources", a.res, "--shutdown-grace", "1s", "--usage-interval", "300ms", "--executor-registration-timeout", "3s", "--log-level", "debug")
}

// state fetches the master's /state.
func (c *cluster) state() masterState {
	var st masterState
	resp, err := http.Get("http://" + c.maddr + "/state")
	if err != nil {
		return st
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&st)
	return st
}

type masterState struct {
	Frameworks []struct {
		ID             string  `json:"id"`
		Name           string  `json:"name"`
		Connected      bool    `json:"connected"`
		Tasks          []stask `json:"tasks"`
		CompletedTasks []stask `json:"completed_tasks"`
	} `json:"frameworks"`
	Slaves []struct {
		ID     string `json:"id"`
		PID    string `json:"pid"`
		Active bool   `json:"active"`
	} `json:"slaves"`
}

type stask struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	SlaveID string `json:"slave_id"`
}

func (c *cluster) waitAgents(n int) {
	waitFor(c.t, 30*time.Second, fmt.Sprintf("%d active agents", n), func() bool {
		active := 0
		for _, s := range c.state().Slaves {
			if s.Active {
				active++
			}
		}
		return active == n
	})
}

// agentState fetches an agent's /state.
func agentState(addr string) (map[string]any, error) {
	resp, err := http.Get("http://" + addr + "/state")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var doc map[string]any
	err = json.NewDecoder(resp.Body).Decode(&doc)
	return doc, err
}

// killSandboxProcesses kills every process whose MESOS_DIRECTORY lies under
// dir: executors that outlive their agent (checkpointing ones do, on purpose).
func killSandboxProcesses(dir string) {
	ents, _ := os.ReadDir("/proc")
	needle := []byte("MESOS_DIRECTORY=" + dir)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(b, needle) {
			continue
		}
		syscall.Kill(-pid, syscall.SIGKILL)
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// postRaw sends body to path on addr with the given content type and
// headers, returning status and body text.
func postRaw(t testing.TB, addr, path, ctype string, body []byte, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// readLines returns the lines of a file, or nil.
func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// metric reads one unlabelled series from the master's /metrics (-1 if
// absent).
func (c *cluster) metric(name string) float64 {
	resp, err := http.Get("http://" + c.maddr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return -1
}
