package registry

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/master/registry/registrytest"
)

// The policy record is applied, written into the registry snapshot, and
// restored from it; a snapshot without one clears it.
func TestRegistryPolicyRoundTrip(t *testing.T) {
	rec := &api.PolicyRecord{Sorter: "bandit", State: []byte{1, 2, 3, 0, 255}, UpdatedUnixNano: 42}
	src := NewRegistry()
	applyAll(t, src, registrytest.Commands())
	applyAll(t, src, []*api.Command{{Type: api.CommandType_BATCH, Batch: []*api.Command{
		{Type: api.CommandType_POLICY_SET, Policy: &api.PolicyRecord{Sorter: "bandit", State: []byte("old")}},
		{Type: api.CommandType_POLICY_SET, Policy: rec},
	}}})
	if got := src.Policy(); !proto.Equal(got, rec) {
		t.Fatalf("Policy() = %v, want the last POLICY_SET %v", got, rec)
	}
	var snap bytes.Buffer
	if err := src.WriteSnapshot(&snap); err != nil {
		t.Fatal(err)
	}
	dst := NewRegistry()
	applyAll(t, dst, []*api.Command{{Type: api.CommandType_POLICY_SET, Policy: &api.PolicyRecord{Sorter: "x"}}})
	if err := dst.Restore(readCloser(snap.Bytes())); err != nil {
		t.Fatal(err)
	}
	if got := dst.Policy(); !proto.Equal(got, rec) {
		t.Errorf("restored Policy() = %v, want %v", got, rec)
	}
	var again bytes.Buffer
	if err := dst.WriteSnapshot(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snap.Bytes(), again.Bytes()) {
		t.Error("the restored registry's snapshot differs from the one it was restored from")
	}

	var empty bytes.Buffer
	if err := NewRegistry().WriteSnapshot(&empty); err != nil {
		t.Fatal(err)
	}
	if err := dst.Restore(readCloser(empty.Bytes())); err != nil {
		t.Fatal(err)
	}
	if p := dst.Policy(); p != nil {
		t.Errorf("a snapshot without a policy record left %v", p)
	}
	if err := dst.ApplyCommand(&api.Command{Type: api.CommandType_POLICY_SET}); err == nil || !strings.Contains(err.Error(), "without a policy record") {
		t.Errorf("POLICY_SET without a record: %v", err)
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }

func readCloser(b []byte) nopCloser { return nopCloser{bytes.NewReader(b)} }
