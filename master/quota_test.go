package master

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	mquota "github.com/mesos/mesos-go/api/v1/lib/quota"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/allot-sched/allot/api"
)

// updateQuotaBody is an UPDATE_QUOTA call of configs (JSON objects).
func updateQuotaBody(force bool, configs ...string) []byte {
	f := "false"
	if force {
		f = "true"
	}
	return []byte(`{"type":"UPDATE_QUOTA","update_quota":{"force":` + f + `,"quota_configs":[` + strings.Join(configs, ",") + `]}}`)
}

// getQuota is GET_QUOTA as principal, decoded with mesos-go's types.
func getQuota(t *testing.T, h *authzHarness, principal string) mquota.QuotaStatus {
	t.Helper()
	code, body := h.do(http.MethodPost, "/api/v1", principal, []byte(`{"type":"GET_QUOTA"}`), nil)
	if code != http.StatusOK {
		t.Fatalf("GET_QUOTA: %d %q", code, body)
	}
	var resp mmaster.Response
	if err := api.JSON.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatalf("GET_QUOTA answer %q does not decode as mesos-go's master.Response: %v", body, err)
	}
	if resp.Type != mmaster.Response_GET_QUOTA || resp.GetQuota == nil {
		t.Fatalf("GET_QUOTA answered %v", resp.Type)
	}
	return resp.GetQuota.Status
}

// UPDATE_QUOTA is validated as Mesos validates it, all or nothing, and
// each refusal is a 400 that names the role and says what is wrong.
func TestUpdateQuotaValidation(t *testing.T) {
	h := newAuthzHarness(t, `{"permissive": true}`)
	h.agent("cpus:8;mem:8192")
	ok := func(body []byte) {
		t.Helper()
		if code, b := h.do(http.MethodPost, "/api/v1", "", body, nil); code != http.StatusOK {
			t.Fatalf("%s: %d %q", body, code, b)
		}
	}
	ok(updateQuotaBody(false, `{"role":"eng","guarantees":{"cpus":{"value":4}},"limits":{"cpus":{"value":6}}}`))
	tests := []struct {
		name string
		body []byte
		code int
		want string
	}{
		{"guarantee above limit", updateQuotaBody(false, `{"role":"dev","guarantees":{"cpus":{"value":2}},"limits":{"cpus":{"value":1}}}`),
			400, "Invalid QuotaConfig: 'QuotaConfig.guarantees' {cpus: 2} is not contained within the 'QuotaConfig.limits' {cpus: 1}"},
		{"children above parent", updateQuotaBody(false, `{"role":"eng/a","guarantees":{"cpus":{"value":3}}}`, `{"role":"eng/b","guarantees":{"cpus":{"value":2}}}`),
			400, "Invalid QuotaConfig: Parent role 'eng' with guarantees ({cpus: 4}) does not contain the sum of its children's guarantees ({cpus: 5})"},
		{"parent lowered below child", updateQuotaBody(false, `{"role":"eng/a","guarantees":{"cpus":{"value":3}}}`, `{"role":"eng","guarantees":{"cpus":{"value":2}}}`),
			400, "Parent role 'eng'"},
		{"child above parent's limit", updateQuotaBody(false, `{"role":"eng/a","limits":{"cpus":{"value":7}}}`),
			400, "Invalid QuotaConfig: Role 'eng/a' with limit cpus: 7 is above the limit of its parent role 'eng' (cpus: 6)"},
		{"default role", updateQuotaBody(false, `{"role":"*","limits":{"cpus":{"value":1}}}`), 400, "the default role '*' cannot have a quota"},
		{"bad role", updateQuotaBody(false, `{"role":"eng/../x","guarantees":{"cpus":{"value":1}}}`), 400, "Invalid QuotaConfig: Invalid 'QuotaConfig.role'"},
		{"no role", updateQuotaBody(false, `{"guarantees":{"cpus":{"value":1}}}`), 400, "Invalid QuotaConfig: 'QuotaConfig.role' must be set"},
		{"negative", updateQuotaBody(false, `{"role":"dev","limits":{"mem":{"value":-1}}}`), 400, "Invalid QuotaConfig: Invalid limit configuration {'mem': -1}: Negative values not supported"},
		{"ports", updateQuotaBody(false, `{"role":"dev","limits":{"ports":{"value":10}}}`), 400, "{'ports': 10}: only named scalar resources have quota"},
		{"role twice", updateQuotaBody(false, `{"role":"dev","limits":{"cpus":{"value":1}}}`, `{"role":"dev"}`), 400, "role 'dev' appears in more than one QuotaConfig"},
		{"overcommit", updateQuotaBody(false, `{"role":"dev","guarantees":{"cpus":{"value":5}}}`),
			400, "Invalid QuotaConfig: total quota guarantees '{cpus: 9}' exceed cluster capacity '{cpus: 8, mem: 8192}' (use 'force' flag to bypass this check)"},
		{"no configs", updateQuotaBody(false), 400, "UPDATE_QUOTA: update_quota.quota_configs is empty"},
	}
	for _, tt := range tests {
		code, body := h.do(http.MethodPost, "/api/v1", "", tt.body, nil)
		if code != tt.code || !strings.Contains(body, tt.want) {
			t.Errorf("%s: %d %q, want %d containing %q", tt.name, code, body, tt.code, tt.want)
		}
	}
	st := getQuota(t, h, "")
	if len(st.Configs) != 1 || st.Configs[0].Role != "eng" {
		t.Fatalf("a refused update changed the quotas: %+v", st.Configs)
	}
	// force skips the capacity check only.
	ok(updateQuotaBody(true, `{"role":"dev","guarantees":{"cpus":{"value":5}}}`))
	// An empty config resets the role to no quota.
	ok(updateQuotaBody(false, `{"role":"dev"}`))
	if st := getQuota(t, h, ""); len(st.Configs) != 1 {
		t.Fatalf("an empty config did not remove dev's quota: %+v", st.Configs)
	}
}

// GET_QUOTA answers Mesos 1.11's QuotaStatus: configs with guarantees and
// limits, and the older infos with the guarantees only.
func TestGetQuotaDecodesAsMesos(t *testing.T) {
	h := newAuthzHarness(t, `{"permissive": true}`)
	h.agent("cpus:8;mem:8192")
	body := updateQuotaBody(false, `{"role":"eng","guarantees":{"cpus":{"value":2},"mem":{"value":1024}},"limits":{"cpus":{"value":4},"gpus":{"value":0}}}`)
	if code, b := h.do(http.MethodPost, "/api/v1", "ops", body, nil); code != http.StatusOK {
		t.Fatalf("UPDATE_QUOTA: %d %q", code, b)
	}
	st := getQuota(t, h, "")
	if len(st.Configs) != 1 || len(st.Infos) != 1 {
		t.Fatalf("GET_QUOTA: %+v", st)
	}
	c := st.Configs[0]
	if c.Role != "eng" || c.Guarantees["cpus"].Value != 2 || c.Guarantees["mem"].Value != 1024 ||
		c.Limits["cpus"].Value != 4 || len(c.Limits) != 2 {
		t.Errorf("config %+v, want eng's guarantees and limits (gpus limited to 0)", c)
	}
	if g, ok := c.Limits["gpus"]; !ok || g.Value != 0 {
		t.Errorf("a limit of 0 gpus was lost: %+v", c.Limits)
	}
	in := st.Infos[0]
	if in.GetRole() != "eng" || len(in.Guarantee) != 2 || in.Guarantee[0].Name != "cpus" || in.Guarantee[0].GetScalar().GetValue() != 2 {
		t.Errorf("info %+v, want eng's guarantees as scalar resources", in)
	}
	// The same as GET /quota, in Mesos's JSON.
	code, raw := h.do(http.MethodGet, "/quota", "", nil, nil)
	var viaHTTP mquota.QuotaStatus
	if code != http.StatusOK || json.Unmarshal([]byte(raw), &viaHTTP) != nil || len(viaHTTP.Configs) != 1 {
		t.Errorf("GET /quota: %d %q", code, raw)
	}
}

// The older calls: SET_QUOTA's guarantee is also the limit and refuses a
// role that has quota; REMOVE_QUOTA and DELETE /quota/<role> refuse one
// that has none; POST /quota takes a QuotaRequest.
func TestSetAndRemoveQuota(t *testing.T) {
	h := newAuthzHarness(t, `{"permissive": true}`)
	h.agent("cpus:8;mem:8192")
	set := []byte(`{"type":"SET_QUOTA","set_quota":{"quota_request":{"role":"eng","guarantee":[{"name":"cpus","type":"SCALAR","scalar":{"value":2}}]}}}`)
	steps := []struct {
		name, method, path string
		body               []byte
		code               int
		want               string
	}{
		{"set", http.MethodPost, "/api/v1", set, 200, ""},
		{"set again", http.MethodPost, "/api/v1", set, 400, "Failed to validate set quota request: Cannot set quota for role 'eng' which already has quota"},
		{"set no guarantee", http.MethodPost, "/api/v1", []byte(`{"type":"SET_QUOTA","set_quota":{"quota_request":{"role":"dev"}}}`), 400, "QuotaInfo with empty 'guarantee'"},
		{"set overcommit", http.MethodPost, "/quota", []byte(`{"role":"dev","guarantee":[{"name":"cpus","type":"SCALAR","scalar":{"value":7}}]}`),
			409, "Quota guarantees overcommit the cluster (use 'force' to bypass this check): total quota guarantees '{cpus: 9}'"},
		{"post /quota", http.MethodPost, "/quota", []byte(`{"role":"dev","guarantee":[{"name":"cpus","type":"SCALAR","scalar":{"value":1}}]}`), 200, ""},
		{"post /quota bad JSON", http.MethodPost, "/master/quota", []byte(`{"role":`), 400, "Failed to parse set quota request JSON"},
		{"remove", http.MethodPost, "/api/v1", []byte(`{"type":"REMOVE_QUOTA","remove_quota":{"role":"eng"}}`), 200, ""},
		{"remove again", http.MethodPost, "/api/v1", []byte(`{"type":"REMOVE_QUOTA","remove_quota":{"role":"eng"}}`), 400, "Failed to remove quota: Role 'eng' has no quota set"},
		{"delete", http.MethodDelete, "/quota/dev", nil, 200, ""},
		{"delete again", http.MethodDelete, "/master/quota/dev", nil, 400, "Failed to remove quota for path '/master/quota/dev': Role 'dev' has no quota set"},
	}
	for _, s := range steps {
		code, body := h.do(s.method, s.path, "", s.body, nil)
		if code != s.code || !strings.Contains(body, s.want) {
			t.Fatalf("%s: %d %q, want %d containing %q", s.name, code, body, s.code, s.want)
		}
		if s.name == "set" {
			c := getQuota(t, h, "").Configs
			if len(c) != 1 || c[0].Limits["cpus"].Value != 2 {
				t.Fatalf("SET_QUOTA's guarantee is not also the limit: %+v", c)
			}
		}
	}
	if st := getQuota(t, h, ""); len(st.Configs) != 0 {
		t.Errorf("quota left after every removal: %+v", st.Configs)
	}
}

// update_quotas guards every quota change, per role and all or nothing;
// view_roles filters GET_QUOTA.
func TestAuthzQuota(t *testing.T) {
	h := newAuthzHarness(t, `{"update_quotas": [
		{"principals": {"values": ["ops"]}, "roles": {"type": "ANY"}},
		{"principals": {"values": ["dev-lead"]}, "roles": {"values": ["dev"]}},
		{"principals": {"type": "ANY"}, "roles": {"type": "NONE"}}],
		"view_roles": [
		{"principals": {"values": ["ops"]}, "roles": {"type": "ANY"}},
		{"principals": {"type": "ANY"}, "roles": {"values": ["dev"]}},
		{"principals": {"type": "ANY"}, "roles": {"type": "NONE"}}]}`)
	h.agent("cpus:8;mem:8192")
	dev, prod := `{"role":"dev","limits":{"cpus":{"value":1}}}`, `{"role":"prod","limits":{"cpus":{"value":2}}}`
	tests := []struct {
		principal string
		body      []byte
		acl       string
	}{
		{"dev-lead", updateQuotaBody(false, dev, prod), "update_quotas[2]"},
		{"eve", updateQuotaBody(false, dev), "update_quotas[2]"},
		{"dev-lead", updateQuotaBody(false, dev), ""},
		{"ops", updateQuotaBody(false, prod), ""},
		{"eve", []byte(`{"type":"REMOVE_QUOTA","remove_quota":{"role":"prod"}}`), "update_quotas[2]"},
	}
	for _, tt := range tests {
		code, body := h.do(http.MethodPost, "/api/v1", tt.principal, tt.body, nil)
		if tt.acl != "" {
			wantDenied(t, code, body, tt.acl)
			continue
		}
		if code != http.StatusOK {
			t.Fatalf("%s %s: %d %q", tt.principal, tt.body, code, body)
		}
	}
	if code, body := h.do(http.MethodDelete, "/quota/prod", "eve", nil, nil); code != http.StatusForbidden {
		t.Errorf("DELETE /quota/prod as eve: %d %q, want 403", code, body)
	}
	if st := getQuota(t, h, "ops"); len(st.Configs) != 2 {
		t.Errorf("ops sees %+v, want dev and prod", st.Configs)
	}
	if st := getQuota(t, h, "eve"); len(st.Configs) != 1 || st.Configs[0].Role != "dev" {
		t.Errorf("eve sees %+v, want dev only", st.Configs)
	}
}

// Quota is replicated: a new leader's allocator holds what the registry
// holds, and GET_QUOTA answers the same.
func TestQuotaSurvivesReelection(t *testing.T) {
	h := newAuthzHarness(t, `{"permissive": true}`)
	h.agent("cpus:8;mem:8192")
	body := updateQuotaBody(false, `{"role":"eng","guarantees":{"cpus":{"value":4}},"limits":{"cpus":{"value":6},"mem":{"value":0}}}`,
		`{"role":"eng/ml","guarantees":{"cpus":{"value":3}}}`)
	if code, b := h.do(http.MethodPost, "/api/v1", "", body, nil); code != http.StatusOK {
		t.Fatalf("UPDATE_QUOTA: %d %q", code, b)
	}
	h.reelect(t)
	h.m.mu.Lock()
	qs := h.m.alloc.Quotas()
	h.m.mu.Unlock()
	eng, ml := qs["eng"], qs["eng/ml"]
	if len(qs) != 2 || eng.Guarantees.Scalar("cpus").Units() != 4 || eng.Limits.Scalar("cpus").Units() != 6 ||
		strings.Join(eng.Limited, ",") != "cpus,mem" || ml.Guarantees.Scalar("cpus").Units() != 3 {
		t.Fatalf("the new leader's allocator holds %+v, want eng (limit mem 0 included) and eng/ml", qs)
	}
	if st := getQuota(t, h, ""); len(st.Configs) != 2 {
		t.Errorf("GET_QUOTA after re-election: %+v", st.Configs)
	}
	if g, l := testutil.ToFloat64(h.m.quotaGauges.guarantee.WithLabelValues("eng/ml", "cpus")),
		testutil.ToFloat64(h.m.quotaGauges.limit.WithLabelValues("eng", "mem")); g != 3 || l != 0 {
		t.Errorf("quota gauges: eng/ml guarantee %v cpus, eng limit %v mem; want 3 and 0", g, l)
	}
}
