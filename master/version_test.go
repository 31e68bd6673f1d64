package master

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
)

// Every field a Mesos client reads a version from says the Mesos API
// version allot implements; allot's own version is beside it.
func TestVersionIsMesosAPIVersion(t *testing.T) {
	h := newHarness(t, nil)
	rec := httptest.NewRecorder()
	handleVersion(rec, httptest.NewRequest("GET", "/version", nil))
	var doc map[string]string
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["version"] != "1.11.0" || doc["allot_version"] != Version || doc["git_tag"] != "allot-"+Version {
		t.Errorf("/version %v, want version 1.11.0, allot_version and git_tag naming %s", doc, Version)
	}
	resp, err := h.m.operatorCall(&mmaster.Call{Type: mmaster.Call_GET_VERSION})
	if err != nil {
		t.Fatal(err)
	}
	if vi := resp.GetVersion.VersionInfo; vi.Version != "1.11.0" || vi.GetGitTag() != "allot-"+Version {
		t.Errorf("GET_VERSION %+v, want version 1.11.0 and git_tag allot-%s", vi, Version)
	}
	if v := h.m.info.GetVersion(); v != "1.11.0" {
		t.Errorf("MasterInfo.version %q, want 1.11.0", v)
	}
}
