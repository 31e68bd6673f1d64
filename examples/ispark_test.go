package examples

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/allot-sched/allot/examples/internal/gen"
	"github.com/allot-sched/allot/internal/testcluster"
)

// The iSpark handoff on a real cluster. The trigger is made deterministic
// with the runtime's test hooks rather than left to timing: "others are
// waiting" is a file the test creates once the points are cached (after
// iteration 1), every measured utilisation is forced to 0.1
// (--ispark-force-util), so iSpark packs the two executors into one and
// gives the other back at the next job boundary, and
// --ispark-await-scale-down holds every later job until that scale-down
// has been carried out, so a run whose iterations are shorter than a
// monitoring epoch cannot finish before the decision. --max-executors 2
// keeps the backlog rule from adding executors before that, so each of
// the two holds about half of the partitions. The inverse-offer path that
// carries the real signal is tested in framework/sched and master
// (TestInverseOffersWithMesosGo).

const (
	isparkPoints = 200000
	isparkIters  = 14
	isparkParts  = "16"
)

// isparkRun runs kmeans under --elastic ispark with the hooks, calling
// during(app) once the trigger file exists; it returns stdout and the
// event log.
func isparkRun(t *testing.T, c *cluster, in string, extra []string, during func(app *testcluster.Proc)) (string, []map[string]any) {
	t.Helper()
	waiting := filepath.Join(t.TempDir(), "others-waiting")
	args := append(isparkArgs(in, isparkIters), append([]string{"--ispark-others-waiting-file", waiting}, extra...)...)
	app := c.startApp(t, "kmeans", args...)
	errb := app.Stderr
	testcluster.WaitFor(t, 60*time.Second, "the first iteration (points cached)", func() bool { return strings.Contains(errb.String(), "iteration 1\n") })
	if err := os.WriteFile(waiting, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if during != nil {
		during(app)
	}
	waitApp(t, app)
	if m := boundaryLine.FindString(errb.String()); m != "" {
		t.Logf("driver: %s", m)
	}
	return app.Out.String(), events(t, errb.String())
}

// isparkArgs are kmeans's flags for an iSpark run of iters iterations on
// two executors whose utilisation is forced to 0.1, each job after the
// points are cached held until the first scale-down.
func isparkArgs(in string, iters int) []string {
	return []string{"--input", in, "--k", "4", "--iterations", strconv.Itoa(iters), "--partitions", isparkParts, "--progress",
		"--executors", "2", "--max-executors", "2", "--cores", "1", "--elastic", "ispark", "--monitor-epoch", "1s", "--ispark-force-util", "0.1",
		"--ispark-await-scale-down", "2m"}
}

// plainKMeans is the same kmeans without scale-down: the output an iSpark
// run must reproduce exactly.
func plainKMeans(t *testing.T, c *cluster, in string) string {
	t.Helper()
	out, errs, err := c.run(t, "kmeans", "--input", in, "--k", "4", "--iterations", strconv.Itoa(isparkIters), "--partitions", isparkParts,
		"--executors", "2", "--cores", "1")
	if err != nil {
		t.Fatalf("kmeans without scale-down: %v\n%s", err, testcluster.Tail(errs, 3000))
	}
	return out
}

// handoffSummary reads an iSpark run's event log: the executor iSpark
// released, the cached partitions it still held when released, the
// partitions moved and asked to move, the successful tasks after the
// release that read the input instead of the cache, and the recomputations application_end
// counts.
type handoffSummary struct {
	giver                         string
	lost, moved, requested, later int
	recomputed                    int
}

func summarise(t *testing.T, evs []map[string]any) handoffSummary {
	t.Helper()
	var s handoffSummary
	removedAt := 0.0
	for _, e := range evs {
		switch e["event"] {
		case "executor_removed":
			if s.giver == "" {
				s.giver, removedAt, s.lost = e["executor"].(string), e["time"].(float64), int(e["lost_cached_partitions"].(float64))
			}
		case "partitions_moved":
			s.moved += int(e["count"].(float64))
			s.requested += int(e["requested"].(float64))
		case "task_end":
			// A task that read the input file computed points the cache
			// should have held.
			read, _ := e["bytes_read"].(float64)
			if removedAt > 0 && e["time"].(float64) > removedAt && e["success"] == true && e["cache_hit"] == false && read > 0 {
				s.later++
			}
		case "application_end":
			if r, ok := e["recomputed_partitions"].(float64); ok {
				s.recomputed = int(r)
			}
		}
	}
	if s.giver == "" {
		t.Fatal("no executor was given back")
	}
	return s
}

// TestISparkGivesBackKeepingCache: with others waiting and low
// utilisation, kmeans gives one of its two executors back; every cached
// partition the driver read from it was moved to the receiver first (none
// lost at the release, none recomputed, no later task misses the cache),
// and the centres are those of a run without scale-down, digit for digit.
func TestISparkGivesBackKeepingCache(t *testing.T) {
	c := newCluster(t)
	in := filepath.Join(t.TempDir(), "points.txt")
	if err := gen.WritePoints(in, isparkPoints, 3, 4, 7); err != nil {
		t.Fatal(err)
	}
	want := plainKMeans(t, c, in)
	out, evs := isparkRun(t, c, in, nil, nil)
	if out != want {
		t.Fatalf("centres with scale-down:\n%s\nwithout:\n%s", out, want)
	}
	ref, _ := gen.LloydReference(in, 4, isparkIters)
	sameCentres(t, parseFloats(t, out), ref)
	s := summarise(t, evs)
	if s.moved == 0 || s.moved != s.requested || s.lost != 0 || s.later != 0 || s.recomputed != 0 {
		t.Fatalf("handoff from %s: moved %d of %d partitions, %d lost at the release, %d later tasks missed the cache, %d recomputed; want all moved, none lost or recomputed",
			s.giver, s.moved, s.requested, s.lost, s.later, s.recomputed)
	}
	t.Logf("%s gave back %d cached partitions to its receiver; %d executor_utilisation events", s.giver, s.moved, count(evs, "executor_utilisation"))
	c.noExecutorsLeft(t)
}

// executorRegistered is the driver's log line for an executor it can use.
var executorRegistered = regexp.MustCompile(`executor \S+ registered at `)

var boundaryLine = regexp.MustCompile(`iSpark scale-down: .*`)

var pausedLine = regexp.MustCompile(`iSpark handoff \S+ -> \S+: 1 of \d+ partitions moved, pausing`)

var handoffLine = regexp.MustCompile(`iSpark handoff: giver (\S+) \(pid (\d+)\)`)

// TestISparkGiverKilledMidHandoff: the giver is killed -9 after its first
// partition moved (the handoff pauses after each until the giver is lost, a
// test hook, and says so on the driver's log): the moved partitions are
// read on the receiver, the rest are recomputed from lineage, and the
// centres are still exactly right.
func TestISparkGiverKilledMidHandoff(t *testing.T) {
	c := newCluster(t)
	in := filepath.Join(t.TempDir(), "points.txt")
	if err := gen.WritePoints(in, isparkPoints, 3, 4, 7); err != nil {
		t.Fatal(err)
	}
	want := plainKMeans(t, c, in)
	out, evs := isparkRun(t, c, in, []string{"--ispark-handoff-pause", "2m"}, func(app *testcluster.Proc) {
		var m []string
		testcluster.WaitFor(t, 60*time.Second, "a handoff to start", func() bool {
			m = handoffLine.FindStringSubmatch(app.Stderr.String())
			return m != nil
		})
		pid, _ := strconv.Atoi(m[2])
		// Kill during the pause after the first partition moved.
		var p []string
		testcluster.WaitFor(t, 30*time.Second, "the first partition moved", func() bool {
			p = pausedLine.FindStringSubmatch(app.Stderr.String())
			return p != nil || strings.Contains(app.Stderr.String(), "iSpark scale-down:")
		})
		if p == nil {
			t.Skipf("giver %s held a single partition: no pause to interrupt", m[1])
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatalf("kill -9 giver %s (pid %d): %v", m[1], pid, err)
		}
	})
	if out != want {
		t.Fatalf("centres after the giver died:\n%s\nwithout scale-down:\n%s", out, want)
	}
	s := summarise(t, evs)
	if s.moved == 0 || s.moved >= s.requested || s.recomputed != s.requested-s.moved {
		t.Fatalf("giver %s killed mid-handoff: moved %d of %d, recomputed %d; want some moved and the rest (%d) recomputed from lineage",
			s.giver, s.moved, s.requested, s.recomputed, s.requested-s.moved)
	}
	t.Logf("giver %s killed after %d of %d partitions moved; %d recomputed from lineage", s.giver, s.moved, s.requested, s.recomputed)
	c.noExecutorsLeft(t)
}

// roomForOne is an agent that holds one executor of 1 core (1 cpu for its
// tasks + 0.1 for the executor), so kmeans's two executors fill a cluster
// of two such agents and a second application finds no room.
const roomForOne = "cpus:1.1;mem:4096;disk:10000;ports:[31000-32000]"

// TestISparkAnswersInverseOffer: the same handoff with the cluster's own
// signal instead of the test hook. The master runs --reclaim; kmeans A's
// two executors fill the cluster; once A's points are cached a second
// kmeans B arrives and finds no room, so the master sends A an inverse
// offer. A (utilisation forced to 0.1, so it is under-used whatever the
// host's load) hears that others wait, gives one executor back with its
// cached partitions moved to the receiver first, and accepts the inverse
// offer; B gets the freed room and finishes. Nothing is lost or recomputed,
// no later task of A misses the cache, and both results are right.
func TestISparkAnswersInverseOffer(t *testing.T) {
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: bins["allot"], Agents: 2,
		MasterFlags: []string{"--log-level", "warn", "--reclaim"},
		AgentFlags:  []string{"--usage-interval", "1s", "--log-level", "warn", "--resources", roomForOne}})}
	in := filepath.Join(t.TempDir(), "points.txt")
	if err := gen.WritePoints(in, isparkPoints, 3, 4, 7); err != nil {
		t.Fatal(err)
	}
	// A is held after its first iteration (the job gate) until B's first
	// executor has started, so "B got room while A still ran" does not
	// depend on how fast A's remaining iterations go.
	const iters = 8
	gate := filepath.Join(t.TempDir(), "b-started")
	a := c.startApp(t, "kmeans", append(isparkArgs(in, iters), "--test-gate-after-jobs", "1", "--test-gate-file", gate)...)
	testcluster.WaitFor(t, 60*time.Second, "A's points cached", func() bool { return strings.Contains(a.Stderr.String(), "iteration 1\n") })
	b := c.startApp(t, "kmeans", "--input", in, "--k", "4", "--iterations", "3", "--partitions", isparkParts,
		"--executors", "1", "--cores", "1")
	testcluster.WaitFor(t, 90*time.Second, "B's first executor", func() bool { return executorRegistered.MatchString(b.Stderr.String()) })
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitApp(t, a)
	waitApp(t, b)
	if !strings.Contains(a.Stderr.String(), "inverse offers: other frameworks wait") {
		t.Fatalf("A never heard an inverse offer:\n%s", testcluster.Tail(a.Stderr.String(), 3000))
	}
	for name, p := range map[string]*testcluster.Proc{"A": a, "B": b} {
		iters := map[string]int{"A": iters, "B": 3}[name]
		ref, _ := gen.LloydReference(in, 4, iters)
		sameCentres(t, parseFloats(t, p.Out.String()), ref)
	}
	evA := events(t, a.Stderr.String())
	aEnd, bIn := firstAt(evA, "application_end"), firstAt(events(t, b.Stderr.String()), "executor_added")
	if bIn == 0 || aEnd == 0 || bIn >= aEnd {
		t.Fatalf("B's first executor at %.2f, A ended at %.2f: want B in while A still ran", bIn, aEnd)
	}
	s := summarise(t, evA)
	if s.moved == 0 || s.moved != s.requested || s.lost != 0 || s.later != 0 || s.recomputed != 0 {
		t.Fatalf("handoff from %s on an inverse offer: moved %d of %d partitions, %d lost at the release, %d later tasks missed the cache, %d recomputed; want all moved, none lost or recomputed",
			s.giver, s.moved, s.requested, s.lost, s.later, s.recomputed)
	}
	if m := boundaryLine.FindString(a.Stderr.String()); m != "" {
		t.Logf("A: %s", m)
	}
	t.Logf("on the inverse offer %s gave back %d cached partitions to its receiver; B's first executor came %.1f s before A ended", s.giver, s.moved, aEnd-bIn)
	c.noExecutorsLeft(t)
}

// firstAt is the time of the first event of kind, 0 if none.
func firstAt(evs []map[string]any, kind string) float64 {
	for _, e := range evs {
		if e["event"] == kind {
			return e["time"].(float64)
		}
	}
	return 0
}
