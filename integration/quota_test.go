package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	mquota "github.com/mesos/mesos-go/api/v1/lib/quota"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/testcluster"
)

// operatorJSON posts a JSON operator call to master addr and returns the
// answer's status and body.
func operatorJSON(t testing.TB, addr, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/api/v1", "application/json", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatalf("operator call: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// rolesOf is master addr's GET /roles by role name.
func rolesOf(t testing.TB, addr string) map[string]operator.Role {
	t.Helper()
	out := map[string]operator.Role{}
	resp, err := http.Get("http://" + addr + "/roles")
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	var doc operator.Roles
	if json.NewDecoder(resp.Body).Decode(&doc) == nil {
		for _, r := range doc.Roles {
			out[r.Name] = r
		}
	}
	return out
}

// launchAll launches one sleeping task on each of s's outstanding offers
// that holds cpus, using all of its cpus, and returns the cpus launched
// and the tasks' ids.
func launchAll(t testing.TB, s *sched, prefix string) (float64, []string) {
	s.mu.Lock()
	offers := s.offers
	s.offers = nil
	s.mu.Unlock()
	total := 0.0
	var ids []string
	for i, o := range offers {
		cpus, mem := offered(o, "cpus"), min(offered(o, "mem"), 64)
		if cpus <= 0 || mem <= 0 {
			continue
		}
		task := cmdTask(fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), i), o, "sleep 600", cpus, mem)
		if err := s.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(task)}.WithOffers(o.ID))); err != nil {
			t.Fatalf("%s: ACCEPT: %v", prefix, err)
		}
		total += cpus
		ids = append(ids, task.TaskID.Value)
	}
	return total, ids
}

// Quota on real processes, with mesos-go's own client: a role at its
// limit is offered no more of it; another role floods what is left, and a
// role with a guarantee still gets it by the second allocation cycle
// after it subscribes (the allocator held it back as headroom); the quota
// is replicated and holds on the new leader after kill -9.
//
// The allocation interval is a minute, so that the cycles are the ones
// events trigger (6 s apart at most, the master's pacing) and the test can
// count them, whatever the host's speed.
func TestQuotaGuaranteeLimitAndFailover(t *testing.T) {
	c := newMCluster(t, 3, 3, "--allocation-interval", "1m")
	lead := c.masters[c.leader(30*time.Second)].http
	code, b := operatorJSON(t, lead, `{"type":"UPDATE_QUOTA","update_quota":{"quota_configs":[
		{"role":"gold","guarantees":{"cpus":{"value":2},"mem":{"value":128}}},
		{"role":"capped","limits":{"cpus":{"value":1},"mem":{"value":128},"disk":{"value":0}}}]}}`)
	if code != http.StatusOK {
		t.Fatalf("UPDATE_QUOTA: %d %s", code, b)
	}

	capped := startCapped(t, lead)
	floodBulk(t, lead)

	// gold gets its guarantee within two cycles of subscribing. The quota
	// stage gives it, agent by agent, what is still unmet, so the 2 cpus
	// and the mem may come in different offers.
	before := testcluster.Metric(lead, "allot_master_allocation_cycle_seconds_count")
	gold := subscribe(t, lead, mesos.FrameworkInfo{Name: "gold", Role: strPtr("gold")})
	goldCPUs := func() float64 {
		gold.mu.Lock()
		defer gold.mu.Unlock()
		sum := 0.0
		for _, o := range gold.offers {
			sum += offered(o, "cpus")
		}
		return sum
	}
	testcluster.WaitFor(t, 30*time.Second, "gold offered its guarantee of 2 cpus", func() bool { return goldCPUs() >= 2 })
	if cycles := testcluster.Metric(lead, "allot_master_allocation_cycle_seconds_count") - before; cycles > 2 {
		t.Errorf("gold's guarantee came after %v allocation cycles, want at most 2", cycles)
	}
	if got := goldCPUs(); got != 2 {
		t.Errorf("gold was offered %v cpus, want its guarantee of 2", got)
	}
	capped.mu.Lock()
	for _, co := range capped.offers {
		if cpus := offered(co, "cpus"); cpus > 0 {
			t.Errorf("capped, at its limit, was offered %v cpus more", cpus)
		}
	}
	capped.mu.Unlock()
	if r := rolesOf(t, lead)["capped"]; r.Allocated["cpus"] != 1 || r.Quota.Limit["cpus"] != 1 {
		t.Errorf("capped on /roles: %+v, want 1 cpu allocated at its limit of 1", r)
	}

	// The new leader holds the quota: in its registry (GET_QUOTA) and in
	// its allocator (/roles).
	old := c.leader(30 * time.Second)
	c.kill9(old)
	next := c.leader(60 * time.Second)
	addr := c.masters[next].http
	code, b = operatorJSON(t, addr, `{"type":"GET_QUOTA"}`)
	var resp mmaster.Response
	if code != http.StatusOK || api.JSON.Unmarshal(b, &resp) != nil || len(resp.GetGetQuota().GetStatus().Configs) != 2 {
		t.Fatalf("GET_QUOTA on the new leader: %d %s", code, b)
	}
	roles := rolesOf(t, addr)
	if roles["gold"].Quota.Guarantee["cpus"] != 2 || roles["capped"].Quota.Limit["cpus"] != 1 {
		t.Errorf("the new leader's allocator holds gold %+v and capped %+v, want their quota", roles["gold"].Quota, roles["capped"].Quota)
	}
	quotaCLI(t, addr)
}

// quotaCLI sets, reads and lists quota with the allot CLI on master addr.
func quotaCLI(t *testing.T, addr string) {
	t.Helper()
	run := func(args ...string) string {
		out, err := exec.Command(allotBin, append(args, "--master", addr)...).CombinedOutput()
		if err != nil {
			t.Fatalf("allot %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := run("quota", "set", "eng/ml", "--guarantee", "cpus:0.5", "--limit", "cpus:1;mem:256"); !strings.Contains(out, "quota of eng/ml: guarantee cpus:0.5, limit cpus:1;mem:256") {
		t.Errorf("allot quota set: %q", out)
	}
	var st mquota.QuotaStatus
	if out := run("quota", "get", "--json"); json.Unmarshal([]byte(out), &st) != nil || len(st.Configs) != 3 {
		t.Errorf("allot quota get --json: %q, want three roles' quota in mesos-go's QuotaStatus", out)
	}
	out := run("roles")
	for _, want := range []string{"ROLE", "eng/ml", "cpus:0.5", "cpus:1;mem:256", "gold"} {
		if !strings.Contains(out, want) {
			t.Errorf("allot roles lacks %q:\n%s", want, out)
		}
	}
}

// startCapped subscribes a framework in role capped (limit 1 cpu) and runs
// a 1-cpu task on its first offer, which must hold no more than that.
func startCapped(t *testing.T, lead string) *sched {
	t.Helper()
	// capped is offered 1 cpu, clipped to its limit, and no more once it
	// holds it (its mem limit keeps what it may still be offered small, so
	// that it leaves the rest to bulk).
	capped := subscribe(t, lead, mesos.FrameworkInfo{Name: "capped", Role: strPtr("capped")})
	o := capped.takeOfferFits(t, 0.5, 64)
	if got := offered(o, "cpus"); got != 1 {
		t.Fatalf("capped (limit 1 cpu) was offered %v cpus", got)
	}
	task := cmdTask("capped-1", o, "sleep 600", 1, 64)
	if err := capped.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(task)}.WithOffers(o.ID))); err != nil {
		t.Fatal(err)
	}
	capped.waitState(t, "capped-1", mesos.TASK_RUNNING)
	return capped
}

// floodBulk subscribes a framework in role bulk that launches on all it is
// offered.
func floodBulk(t *testing.T, lead string) {
	t.Helper()
	// bulk floods everything but gold's headroom: 6 cpus less capped's 1
	// less gold's 2.
	bulk := subscribe(t, lead, mesos.FrameworkInfo{Name: "bulk", Role: strPtr("bulk")})
	flooded := 0.0
	var bulkTasks []string
	testcluster.WaitFor(t, 60*time.Second, "bulk to hold 3 cpus", func() bool {
		cpus, ids := launchAll(t, bulk, "bulk")
		flooded, bulkTasks = flooded+cpus, append(bulkTasks, ids...)
		return flooded >= 3
	})
	for _, id := range bulkTasks {
		bulk.waitState(t, id, mesos.TASK_RUNNING)
	}
	if flooded != 3 {
		t.Fatalf("bulk launched %v cpus, want 3: gold's guarantee must be held back", flooded)
	}
}

func strPtr(s string) *string { return &s }
