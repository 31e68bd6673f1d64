package examples

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/examples/internal/gen"
	"github.com/allot-sched/allot/internal/testcluster"
)

// The tests run the example binaries against a real master and two real
// agents on loopback, as `allot dev --agents 2` would, built once here.
var bins map[string]string

func TestMain(m *testing.M) {
	testcluster.Main(m, []testcluster.Package{
		testcluster.Allot,
		{Name: "wordcount", Path: "./wordcount"},
		{Name: "kmeans", Path: "./kmeans"},
		{Name: "pagerank", Path: "./pagerank"},
		{Name: "testapp", Path: "./internal/testapp"},
		{Name: "colojob", Path: "./colojob"},
	}, func(b map[string]string) { bins = b })
}

type cluster struct {
	*testcluster.Cluster
}

// newCluster starts a master (DRF, oblivious unless flags say otherwise)
// and two agents of 4 cpus and 4 GB.
func newCluster(t testing.TB, masterFlags ...string) *cluster {
	t.Helper()
	return &cluster{testcluster.New(t, testcluster.Config{
		Bin:         bins["allot"],
		Agents:      2,
		MasterFlags: append([]string{"--log-level", "warn"}, masterFlags...),
		AgentFlags:  []string{"--usage-interval", "1s", "--log-level", "warn"},
	})}
}

// executorPIDs lists live executor processes started by this cluster's
// agents (their sandbox lies under the cluster's dir).
func (c *cluster) executorPIDs() []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	needle := []byte("MESOS_DIRECTORY=" + c.Dir)
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

// run runs an example against the cluster and waits for it.
func (c *cluster) run(t testing.TB, name string, args ...string) (stdout, stderr string, err error) {
	p := c.startApp(t, name, args...)
	select {
	case <-p.Done():
	case <-time.After(90 * time.Second):
		t.Fatalf("%s did not finish within 90s", name)
	}
	return p.Out.String(), p.Stderr.String(), p.Err()
}

// startApp starts an example against the cluster, its event log under the
// cluster's dir, stdout (its result) apart from stderr.
func (c *cluster) startApp(t testing.TB, name string, args ...string) *testcluster.Proc {
	full := append([]string{bins[name], "--master", c.MasterAddr, "--event-log-dir", filepath.Join(c.Dir, "events")}, args...)
	return testcluster.StartSplit(t, name, nil, full...)
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
	testcluster.WaitFor(t, 20*time.Second, "every executor process to exit", func() bool { return len(c.executorPIDs()) == 0 })
}

func TestExamplesOnCluster(t *testing.T) {
	c := newCluster(t)
	dir := t.TempDir()

	t.Run("wordcount", func(t *testing.T) { checkWordcountOnCluster(t, c, dir) })
	t.Run("kmeans", func(t *testing.T) { checkKmeansOnCluster(t, c, dir) })
	t.Run("pagerank", func(t *testing.T) { checkPagerankOnCluster(t, c, dir) })
}

// checkWordcountOnCluster runs wordcount on two agents and compares its
// output with a plain map count and its event log with what ran.
func checkWordcountOnCluster(t *testing.T, c *cluster, dir string) {
	in := filepath.Join(dir, "words.txt")
	if err := gen.WriteText(in, 8<<20, 7); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := c.run(t, "wordcount", "--input", in, "--executors", "2", "--cores", "2", "--partitions", "6")
	if err != nil {
		t.Fatalf("wordcount: %v\n%s", err, testcluster.Tail(stderr, 3000))
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
}

// checkKmeansOnCluster compares kmeans's centres with Lloyd's algorithm run
// in the test.
func checkKmeansOnCluster(t *testing.T, c *cluster, dir string) {
	in := filepath.Join(dir, "points.txt")
	if err := gen.WritePoints(in, 30000, 3, 4, 3); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := c.run(t, "kmeans", "--input", in, "--k", "4", "--iterations", "6", "--partitions", "4")
	if err != nil {
		t.Fatalf("kmeans: %v\n%s", err, testcluster.Tail(stderr, 3000))
	}
	want, err := gen.LloydReference(in, 4, 6)
	if err != nil {
		t.Fatal(err)
	}
	sameCentres(t, parseFloats(t, out), want)
	c.noExecutorsLeft(t)
}

// checkPagerankOnCluster compares pagerank's ranks with power iteration
// run in the test.
func checkPagerankOnCluster(t *testing.T, c *cluster, dir string) {
	in := filepath.Join(dir, "edges.txt")
	if err := gen.WriteGraph(in, 3000, 5); err != nil {
		t.Fatal(err)
	}
	out, stderr, err := c.run(t, "pagerank", "--input", in, "--iterations", "8", "--partitions", "4")
	if err != nil {
		t.Fatalf("pagerank: %v\n%s", err, testcluster.Tail(stderr, 3000))
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
}
