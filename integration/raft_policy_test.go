package integration

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/master"
)

// policyView is master i's GET master.PolicyPath (nil while it does not
// answer).
func (c *mcluster) policyView(i int) *master.PolicyView {
	resp, err := noRedirect.Get("http://" + c.masters[i].http + master.PolicyPath)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var v master.PolicyView
	if json.NewDecoder(resp.Body).Decode(&v) != nil {
		return nil
	}
	return &v
}

// kill -9 the leader of a --sorter bandit cluster once it has replicated
// its policy state: the new leader holds exactly that state (the bandit's
// record of when the framework registered, which re-adding the framework
// from the registry alone would stamp with the election's time).
func TestRaftPolicyStateSurvivesKill9(t *testing.T) {
	c := newMCluster(t, 3, 0, "--sorter", "bandit", "--mode", "characterized", "--policy-sync-interval", "200ms")
	startRSched(t, c.seeds(), "true")
	old := c.leader(10 * time.Second)
	var before []byte
	testcluster.WaitFor(t, 30*time.Second, "the leader's policy state replicated", func() bool {
		v := c.policyView(old)
		if v == nil || v.Replicated == nil || !v.Replicated.Current || len(v.Models) != 1 {
			return false
		}
		before = v.Models[0].State
		return bytes.Contains(before, []byte(`"added_unix_nano":{"`))
	})
	// A re-add from the registry alone would stamp the framework with the
	// new leader's clock at its election, which comes after the kill: the
	// replicated stamps all come before it, so a re-add cannot equal them.
	var w struct {
		Added map[string]int64 `json:"added_unix_nano"`
	}
	if err := json.Unmarshal(before, &w); err != nil || len(w.Added) != 1 {
		t.Fatalf("replicated bandit state %s: %v, want one framework's registration", before, err)
	}
	killed := time.Now()
	for fw, ns := range w.Added {
		if ns >= killed.UnixNano() {
			t.Fatalf("framework %s registered at %v, not before the kill at %v", fw, time.Unix(0, ns), killed)
		}
	}
	c.kill9(old)
	lead := c.leader(30 * time.Second)
	if lead == old {
		t.Fatalf("master %d still leads after kill -9", old)
	}
	v := c.policyView(lead)
	if v == nil || len(v.Models) != 1 {
		t.Fatalf("new leader's policy view %+v", v)
	}
	if !bytes.Equal(v.Models[0].State, before) {
		t.Errorf("new leader's bandit state\n%s\nwant the replicated\n%s", v.Models[0].State, before)
	}
	if n := testcluster.MetricSum(c.masters[lead].http, `allot_master_allocator_errors_total{op="restore_policies"}`); n != 0 {
		t.Errorf("restore errors on the new leader: %v", n)
	}
}
