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
	time.Sleep(time.Second) // let the election timestamps of a re-add differ
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
