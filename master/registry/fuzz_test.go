package registry

import (
	"bytes"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/master/registry/registrytest"
)

// FuzzRegistryRestore feeds a raft snapshot to Registry.Restore: damage is an
// error that leaves the registry as it was; an accepted snapshot writes back
// and restores to the same records.
func FuzzRegistryRestore(f *testing.F) {
	r := NewRegistry()
	for _, c := range registrytest.Commands() {
		if err := r.ApplyCommand(c); err != nil {
			f.Fatal(err)
		}
	}
	var good bytes.Buffer
	if err := r.WriteSnapshot(&good); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	for _, s := range []string{"", "\n", "3\nabc", "-1\n", "99999999999\n", "5\n\x0a\x03abc", "0\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, snap []byte) {
		r := NewRegistry()
		before := r.records()
		if err := r.Restore(io.NopCloser(bytes.NewReader(snap))); err != nil {
			if len(r.records()) != len(before) {
				t.Fatal("a failed Restore changed the registry")
			}
			return
		}
		var out bytes.Buffer
		if err := r.WriteSnapshot(&out); err != nil {
			t.Fatalf("restored registry does not snapshot: %v", err)
		}
		r2 := NewRegistry()
		if err := r2.Restore(io.NopCloser(bytes.NewReader(out.Bytes()))); err != nil {
			t.Fatalf("restoring the registry's own snapshot failed: %v", err)
		}
		a, b := r.records(), r2.records()
		if len(a) != len(b) {
			t.Fatalf("round trip: %d records, then %d", len(a), len(b))
		}
		for i := range a {
			if !proto.Equal(a[i], b[i]) {
				t.Fatalf("round trip record %d: %v, then %v", i, a[i], b[i])
			}
		}
	})
}
