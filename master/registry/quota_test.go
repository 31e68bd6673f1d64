package registry

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// QUOTA_UPDATE sets several roles at once, an empty record resets its role,
// and the quotas go through a snapshot and back unchanged.
func TestRegistryQuotaUpdate(t *testing.T) {
	eng := &api.QuotaRecord{Role: "eng", Guarantees: map[string]float64{"cpus": 4}, Limits: map[string]float64{"cpus": 8, "mem": 0}, Principal: "ops"}
	ml := &api.QuotaRecord{Role: "eng/ml", Guarantees: map[string]float64{"cpus": 2}}
	steps := []struct {
		name string
		cmd  *api.Command
		want []*api.QuotaRecord
		err  string
	}{
		{"two roles at once", &api.Command{Type: api.CommandType_QUOTA_UPDATE, Quotas: []*api.QuotaRecord{ml, eng}}, []*api.QuotaRecord{eng, ml}, ""},
		{"without quotas", &api.Command{Type: api.CommandType_QUOTA_UPDATE}, []*api.QuotaRecord{eng, ml}, "without quotas"},
		{"a role missing refuses all", &api.Command{Type: api.CommandType_QUOTA_UPDATE, Quotas: []*api.QuotaRecord{{Role: "eng"}, {}}}, []*api.QuotaRecord{eng, ml}, "without a role"},
		{"empty resets", &api.Command{Type: api.CommandType_QUOTA_UPDATE, Quotas: []*api.QuotaRecord{{Role: "eng/ml"}}}, []*api.QuotaRecord{eng}, ""},
	}
	r := NewRegistry()
	for _, s := range steps {
		err := r.ApplyCommand(s.cmd)
		if (err == nil) != (s.err == "") || (err != nil && !strings.Contains(err.Error(), s.err)) {
			t.Fatalf("%s: err = %v, want %q", s.name, err, s.err)
		}
		got := r.Quotas()
		if len(got) != len(s.want) {
			t.Fatalf("%s: Quotas() = %v, want %v", s.name, got, s.want)
		}
		for i := range got {
			if !proto.Equal(got[i], s.want[i]) {
				t.Fatalf("%s: Quotas()[%d] = %v, want %v", s.name, i, got[i], s.want[i])
			}
		}
	}
	var snap bytes.Buffer
	if err := r.WriteSnapshot(&snap); err != nil {
		t.Fatal(err)
	}
	dst := NewRegistry()
	applyAll(t, dst, []*api.Command{{Type: api.CommandType_QUOTA_UPDATE, Quotas: []*api.QuotaRecord{ml}}})
	if err := dst.Restore(readCloser(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := dst.Quotas(); len(got) != 1 || !proto.Equal(got[0], eng) {
		t.Errorf("restored Quotas() = %v, want only %v", got, eng)
	}
}
