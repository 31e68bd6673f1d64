package master

import (
	"encoding/json"
	"net/http"
	"testing"

	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
)

// GET_ROLES lists every role with a weight, a quota or a framework, and
// their ancestors, as mesos-go's Role decodes it; GET /roles adds each
// role's quota and reservations in Mesos's /roles JSON.
func TestGetRolesListsWeightsQuotaFrameworks(t *testing.T) {
	h := newAuthzHarness(t, `{"permissive": true}`)
	// Two agents: eng/ml's guarantee holds one back from "*" (headroom).
	h.agent("cpus:4;mem:4096")
	h.agent("cpus:4;mem:4096")
	for _, body := range []string{
		`{"type":"UPDATE_WEIGHTS","update_weights":{"weight_infos":[{"role":"ops","weight":3}]}}`,
		string(updateQuotaBody(false, `{"role":"eng/ml","guarantees":{"cpus":{"value":2}},"limits":{"cpus":{"value":4}}}`)),
	} {
		if code, b := h.do(http.MethodPost, "/api/v1", "", []byte(body), nil); code != http.StatusOK {
			t.Fatalf("%s: %d %q", body, code, b)
		}
	}
	fw := h.framework("star")
	h.offer(fw)
	code, body := h.do(http.MethodPost, "/api/v1", "", []byte(`{"type":"GET_ROLES"}`), nil)
	var resp mmaster.Response
	if code != http.StatusOK || api.JSON.Unmarshal([]byte(body), &resp) != nil || resp.GetRoles == nil {
		t.Fatalf("GET_ROLES: %d %q", code, body)
	}
	byName := map[string]int{}
	for i, r := range resp.GetRoles.Roles {
		byName[r.Name] = i
	}
	for _, want := range []string{"*", "eng", "eng/ml", "ops"} {
		if _, ok := byName[want]; !ok {
			t.Errorf("GET_ROLES lists %q? no; it lists %v", want, byName)
		}
	}
	if r := resp.GetRoles.Roles[byName["ops"]]; r.Weight != 3 || len(r.Frameworks) != 0 {
		t.Errorf("ops: %+v, want weight 3 and no framework", r)
	}
	if r := resp.GetRoles.Roles[byName["*"]]; len(r.Frameworks) != 1 || r.Frameworks[0].Value != fw.id || scalarsOf(r.Resources)["cpus"] != 4 {
		t.Errorf("*: %+v, want the framework holding its offer of 4 cpus", r)
	}
	code, body = h.do(http.MethodGet, "/roles", "", nil, nil)
	var doc operator.Roles
	if code != http.StatusOK || json.Unmarshal([]byte(body), &doc) != nil {
		t.Fatalf("GET /roles: %d %q", code, body)
	}
	for _, r := range doc.Roles {
		if r.Name == "eng/ml" && (r.Quota.Guarantee["cpus"] != 2 || r.Quota.Limit["cpus"] != 4 || r.Weight != 1) {
			t.Errorf("/roles eng/ml: %+v, want guarantee 2 cpus, limit 4, weight 1", r)
		}
	}
}
