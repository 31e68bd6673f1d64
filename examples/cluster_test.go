package examples

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/allot-sched/allot/examples/internal/gen"
)

// The tests run the example binaries against a real master and two real
// agents on loopback, as `allot dev --agents 2` would, built once here.
var bins = map[string]string{}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "allot-examples-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for name, pkg := range map[string]string{"allot": "../cmd/allot", "wordcount": "./wordcount", "kmeans": "./kmeans", "pagerank": "./pagerank", "testapp": "./internal/testapp"} {
		bins[name] = filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", bins[name], pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", pkg, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs a process in its own process group, killed at cleanup.
func start(t testing.TB, name string, args ...string) (*exec.Cmd, *syncBuf, *syncBuf, chan error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, errb := &syncBuf{}, &syncBuf{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if t.Failed() {
			t.Logf("--- %s stderr ---\n%s", name, tail(errb.String(), 4000))
		}
	})
	return cmd, out, errb, done
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

type cluster struct {
	dir, master string
	agents      []string
}

// newCluster starts a master (DRF, oblivious unless flags say otherwise)
// and two agents of 4 cpus and 4 GB.
func newCluster(t testing.TB, masterFlags ...string) *cluster {
	c := &cluster{dir: t.TempDir(), master: freePort(t)}
	t.Cleanup(func() { killSandboxProcesses(c.dir) })
	args := append([]string{bins["allot"], "master", "--listen", c.master, "--work-dir", filepath.Join(c.dir, "master"),
		"--allocation-interval", "100ms", "--heartbeat-interval", "2s", "--log-level", "warn"}, masterFlags...)
	start(t, "master", args...)
	waitFor(t, 30*time.Second, "master /health", func() bool {
		resp, err := http.Get("http://" + c.master + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	for i := 0; i < 2; i++ {
		addr := freePort(t)
		c.agents = append(c.agents, addr)
		start(t, "agent"+strconv.Itoa(i), bins["allot"], "agent", "--master", c.master, "--listen", addr, "--work-dir", filepath.Join(c.dir, "agent"+strconv.Itoa(i)),
			"--resources", "cpus:4;mem:4096;disk:10000;ports:[31000-32000]", "--shutdown-grace", "1s", "--usage-interval", "1s", "--log-level", "warn")
	}
	waitFor(t, 30*time.Second, "two active agents", func() bool {
		var st struct {
			Slaves []struct{ Active bool } `json:"slaves"`
		}
		resp, err := http.Get("http://" + c.master + "/state")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		json.NewDecoder(resp.Body).Decode(&st)
		n := 0
		for _, s := range st.Slaves {
			if s.Active {
				n++
			}
		}
		return n == 2
	})
	return c
}

// executorPIDs lists live executor processes started by this cluster's
// agents (their sandbox lies under the cluster's dir).
func (c *cluster) executorPIDs() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	needle := []byte("MESOS_DIRECTORY=" + c.dir)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(b, needle) || !bytes.Contains(b, []byte("ALLOT_FRAMEWORK_EXECUTOR=1")) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && bytes.Contains(st, []byte(") Z ")) {
			continue // a zombie waiting for its agent
		}
		out = append(out, pid)
	}
	return out
}

func killSandboxProcesses(dir string) {
	ents, _ := os.ReadDir("/proc")
	needle := []byte("MESOS_DIRECTORY=" + dir)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/environ"); err == nil && bytes.Contains(b, needle) {
			syscall.Kill(-pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// metric sums the master's /metrics series whose name and labels start
// with prefix (e.g. `allot_master_scheduler_calls_total{type="DECLINE"}`).
func (c *cluster) metric(prefix string) float64 {
	resp, err := http.Get("http://" + c.master + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	sum := 0.0
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.HasPrefix(f[0], prefix) {
			v, _ := strconv.ParseFloat(f[1], 64)
			sum += v
		}
	}
	return sum
}

// run runs an example against the cluster and waits for it.
func (c *cluster) run(t testing.TB, name string, args ...string) (stdout, stderr string, err error) {
	_, out, errb, done := c.startApp(t, name, args...)
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		t.Fatalf("%s did not finish within 90s", name)
	}
	return out.String(), errb.String(), err
}

func (c *cluster) startApp(t testing.TB, name string, args ...string) (*exec.Cmd, *syncBuf, *syncBuf, chan error) {
	full := append([]string{bins[name], "--master", c.master, "--event-log-dir", filepath.Join(c.dir, "events")}, args...)
	return start(t, name, full...)
}

// events reads the event log named on an app's stderr.
func events(t testing.TB, stderr string) []map[string]any {
	i := strings.LastIndex(stderr, "event log: ")
	if i < 0 {
		t.Fatalf("no event log path on stderr")
	}
	path := strings.TrimSpace(strings.SplitN(stderr[i+len("event log: "):], "\n", 2)[0])
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("event log line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

func count(evs []map[string]any, kind string) int {
	n := 0
	for _, e := range evs {
		if e["event"] == kind {
			n++
		}
	}
	return n
}

func parseFloats(t testing.TB, out string) [][]float64 {
	var res [][]float64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var row []float64
		for _, f := range strings.Fields(line) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				t.Fatalf("output line %q: %v", line, err)
			}
			row = append(row, v)
		}
		res = append(res, row)
	}
	return res
}

func sameCentres(t testing.TB, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d centres, want %d", len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if math.Abs(got[i][j]-want[i][j]) > 1e-6 {
				t.Fatalf("centre %d = %v, Lloyd's loop gives %v", i, got[i], want[i])
			}
		}
	}
}

func (c *cluster) noExecutorsLeft(t testing.TB) {
	t.Helper()
	waitFor(t, 20*time.Second, "every executor process to exit", func() bool { return len(c.executorPIDs()) == 0 })
}

func TestExamplesOnCluster(t *testing.T) {
	c := newCluster(t)
	dir := t.TempDir()

	t.Run("wordcount", func(t *testing.T) {
		in := filepath.Join(dir, "words.txt")
		if err := gen.WriteText(in, 8<<20, 7); err != nil {
			t.Fatal(err)
		}
		out, stderr, err := c.run(t, "wordcount", "--input", in, "--executors", "2", "--cores", "2", "--partitions", "6")
		if err != nil {
			t.Fatalf("wordcount: %v\n%s", err, tail(stderr, 3000))
		}
		ref, err := gen.CountWords(in, 1)
		if err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for _, kv := range gen.SortedCounts(ref) {
			fmt.Fprintf(&want, "%s\t%d\n", kv.Key, kv.Value)
		}
		if out != want.String() {
			t.Fatalf("wordcount output differs from a plain map count (%d vs %d bytes)", len(out), want.Len())
		}
		evs := events(t, stderr)
		if n := count(evs, "executor_added"); n < 2 {
			t.Fatalf("%d executors registered, want 2", n)
		}
		hosts := map[string]bool{}
		for _, e := range evs {
			if e["event"] == "executor_launched" {
				hosts[e["agent"].(string)] = true
			}
		}
		if len(hosts) != 2 {
			t.Errorf("executors launched on %d agents, want both", len(hosts))
		}
		if count(evs, "stage_completed") < 3 || count(evs, "executor_stage") < 3 || count(evs, "application_end") != 1 {
			t.Fatalf("event log lacks stages, per-executor stage usage or the end: %d/%d/%d", count(evs, "stage_completed"), count(evs, "executor_stage"), count(evs, "application_end"))
		}
		c.noExecutorsLeft(t)
	})

	t.Run("kmeans", func(t *testing.T) {
		in := filepath.Join(dir, "points.txt")
		if err := gen.WritePoints(in, 30000, 3, 4, 3); err != nil {
			t.Fatal(err)
		}
		out, stderr, err := c.run(t, "kmeans", "--input", in, "--k", "4", "--iterations", "6", "--partitions", "4")
		if err != nil {
			t.Fatalf("kmeans: %v\n%s", err, tail(stderr, 3000))
		}
		want, err := gen.LloydReference(in, 4, 6)
		if err != nil {
			t.Fatal(err)
		}
		sameCentres(t, parseFloats(t, out), want)
		c.noExecutorsLeft(t)
	})

	t.Run("pagerank", func(t *testing.T) {
		in := filepath.Join(dir, "edges.txt")
		if err := gen.WriteGraph(in, 3000, 5); err != nil {
			t.Fatal(err)
		}
		out, stderr, err := c.run(t, "pagerank", "--input", in, "--iterations", "8", "--partitions", "4")
		if err != nil {
			t.Fatalf("pagerank: %v\n%s", err, tail(stderr, 3000))
		}
		want, err := gen.PageRankReference(in, 8)
		if err != nil {
			t.Fatal(err)
		}
		rows := parseFloats(t, out)
		if len(rows) != len(want) {
			t.Fatalf("%d ranks, power iteration gives %d", len(rows), len(want))
		}
		for _, r := range rows {
			if w := want[int64(r[0])]; math.Abs(r[1]-w) > 1e-9 {
				t.Fatalf("rank of %d = %v, power iteration gives %v", int64(r[0]), r[1], w)
			}
		}
		c.noExecutorsLeft(t)
	})
}
