package testcluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/allot-sched/allot/api/operator"
)

// DefaultResources is what each agent New starts offers.
const DefaultResources = "cpus:4;mem:4096;disk:10000;ports:[31000-32000]"

// Config says how New starts a cluster.
type Config struct {
	Bin    string // the allot binary
	Agents int    // agents started with DefaultResources
	// MasterFlags and AgentFlags follow the harness's own flags on every
	// start and restart, so a suite's choice (log level, intervals) and a
	// test's override (a later flag wins) both apply.
	MasterFlags []string
	AgentFlags  []string
}

// Cluster is one master and its agents on loopback, under one directory.
type Cluster struct {
	T          testing.TB
	Dir        string // work dirs: Dir/master, Dir/agent<i>
	MasterAddr string // the master's HTTP address
	Master     *Proc
	Agents     []*Agent
	cfg        Config
}

// Agent is one agent process and what it was started with, so that a test
// can kill it and start it again on the same address and work dir.
type Agent struct {
	*Proc
	Addr, Dir, Resources string
}

// New starts a master, then cfg.Agents agents, and waits until the master
// lists them all active. At cleanup it kills the processes and every
// executor left in the cluster's sandboxes; if the test failed it logs the
// sandboxes' stdout and stderr.
func New(t testing.TB, cfg Config) *Cluster {
	t.Helper()
	c := &Cluster{T: t, Dir: t.TempDir(), MasterAddr: FreePort(t), cfg: cfg}
	// Registered before the processes' own cleanups, so it runs after
	// them: agents are gone and can no longer restart an executor.
	t.Cleanup(func() {
		KillSandboxProcesses(c.Dir)
		for _, a := range c.Agents {
			RemoveAgentCgroups(a.Dir)
		}
		if t.Failed() {
			LogSandboxes(t, c.Dir)
		}
	})
	c.StartMaster()
	for i := 0; i < cfg.Agents; i++ {
		c.AddAgent(DefaultResources)
	}
	c.WaitAgents(cfg.Agents)
	return c
}

// StartMaster starts (or restarts, after Master.Kill) the master on
// MasterAddr with its work dir under Dir, and waits for /health.
func (c *Cluster) StartMaster() {
	c.T.Helper()
	flags := append([]string{"--work-dir", filepath.Join(c.Dir, "master")}, c.cfg.MasterFlags...)
	c.Master = StartMaster(c.T, "master", c.cfg.Bin, c.MasterAddr, flags...)
}

// AddAgent starts one more agent offering res, on a fresh port and work
// dir. It does not wait for the master to list it.
func (c *Cluster) AddAgent(res string) *Agent {
	c.T.Helper()
	a := &Agent{Addr: FreePort(c.T), Dir: filepath.Join(c.Dir, "agent"+strconv.Itoa(len(c.Agents))), Resources: res}
	c.Agents = append(c.Agents, a)
	c.StartAgent(a)
	return a
}

// StartAgent starts (or restarts, after a.Kill) agent a.
func (c *Cluster) StartAgent(a *Agent) {
	c.T.Helper()
	StartAgent(c.T, c.cfg.Bin, c.MasterAddr, a, c.cfg.AgentFlags...)
}

// WaitAgents waits up to 30s for the master to list n active agents.
func (c *Cluster) WaitAgents(n int) {
	c.T.Helper()
	WaitFor(c.T, 30*time.Second, fmt.Sprintf("%d active agents", n), func() bool {
		var st operator.State
		if getJSON("http://"+c.MasterAddr+"/state", &st) != nil {
			return false
		}
		active := 0
		for _, s := range st.Slaves {
			if s.Active {
				active++
			}
		}
		return active == n
	})
}

// Metric reads the master's series named name (labels included, exactly
// as exposed).
func (c *Cluster) Metric(name string) float64 { return Metric(c.MasterAddr, name) }

// MetricSum sums the master's series that start with prefix.
func (c *Cluster) MetricSum(prefix string) float64 { return MetricSum(c.MasterAddr, prefix) }

// Metric reads the one series named name (labels included, exactly as
// exposed) from /metrics at addr: -1 if it is absent or nothing answers.
func Metric(addr, name string) float64 {
	body, err := metrics(addr)
	if err != nil {
		return -1
	}
	return metric(body, name, false)
}

// MetricSum sums the series at addr's /metrics whose name and labels start
// with prefix (e.g. `allot_master_scheduler_calls_total{type="DECLINE"}`):
// 0 if none, -1 if nothing answers.
func MetricSum(addr, prefix string) float64 {
	body, err := metrics(addr)
	if err != nil {
		return -1
	}
	return metric(body, prefix, true)
}

func metrics(addr string) (string, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body) // a cut body still holds the series before the cut
	return string(b), nil
}

// metric reads a Prometheus text exposition: the first series named
// exactly name (or -1), or with sum the total of every series starting
// with name.
func metric(body, name string, sum bool) float64 {
	total := 0.0
	for _, line := range strings.Split(body, "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		switch {
		case !sum && f[0] == name:
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		case sum && strings.HasPrefix(f[0], name):
			v, _ := strconv.ParseFloat(f[1], 64)
			total += v
		}
	}
	if !sum {
		return -1
	}
	return total
}

// StartMaster starts an allot master listening on addr with the harness's
// short intervals (allocation every 100ms, heartbeats every 2s), then
// flags, and waits up to 30s for its /health to answer 200.
func StartMaster(t testing.TB, name, bin, addr string, flags ...string) *Proc {
	t.Helper()
	args := append([]string{bin, "master", "--listen", addr,
		"--allocation-interval", "100ms", "--heartbeat-interval", "2s"}, flags...)
	p := Start(t, name, nil, args...)
	WaitFor(t, 30*time.Second, "master "+addr+" /health", func() bool {
		resp, err := http.Get("http://" + addr + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return p
}

// StartAgent starts agent a (its address, work dir and resources set)
// against masters, a comma-separated list of master addresses, with a
// 1s shutdown grace, then flags; it sets a.Proc.
func StartAgent(t testing.TB, bin, masters string, a *Agent, flags ...string) {
	t.Helper()
	args := append([]string{bin, "agent", "--master", masters, "--listen", a.Addr,
		"--work-dir", a.Dir, "--resources", a.Resources, "--shutdown-grace", "1s"}, flags...)
	a.Proc = Start(t, "agent-"+a.Addr, nil, args...)
}

// KillSandboxProcesses kills every process whose MESOS_DIRECTORY lies under
// dir: executors that outlive their agent (checkpointing ones do, on
// purpose), with their process groups.
func KillSandboxProcesses(dir string) {
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

// LogSandboxes logs the tail of every non-empty executor stdout and stderr
// in the agents' sandboxes under dir.
func LogSandboxes(t testing.TB, dir string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "agent*", "slaves", "*", "frameworks", "*", "executors", "*", "runs", "*", "std*"))
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil && len(b) > 0 {
			t.Logf("--- %s ---\n%s", strings.TrimPrefix(l, dir), Tail(string(b), 2000))
		}
	}
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}
