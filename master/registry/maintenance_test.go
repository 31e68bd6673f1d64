package registry

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// TestMaintenanceRecord checks that MAINTENANCE_SET replaces the record
// whole, survives a snapshot and its restore, and is refused without one.
func TestMaintenanceRecord(t *testing.T) {
	first := &api.MaintenanceRecord{Schedule: []byte("s1"), Agents: map[string]*api.AgentMaintenance{"a1": {Deactivated: true}}}
	second := &api.MaintenanceRecord{Down: [][]byte{[]byte("m1")}, Agents: map[string]*api.AgentMaintenance{"a2": {Drain: []byte("d")}}}
	tests := []struct {
		name string
		cmds []*api.Command
		want *api.MaintenanceRecord
		err  string
	}{
		{"none", nil, nil, ""},
		{"set", []*api.Command{{Type: api.CommandType_MAINTENANCE_SET, Maintenance: first}}, first, ""},
		{"replaced whole", []*api.Command{{Type: api.CommandType_MAINTENANCE_SET, Maintenance: first},
			{Type: api.CommandType_MAINTENANCE_SET, Maintenance: second}}, second, ""},
		{"in a batch", []*api.Command{{Type: api.CommandType_BATCH, Batch: []*api.Command{{Type: api.CommandType_MAINTENANCE_SET, Maintenance: second}}}}, second, ""},
		{"missing record", []*api.Command{{Type: api.CommandType_MAINTENANCE_SET}}, nil, "without a maintenance record"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			var err error
			for _, c := range tc.cmds {
				if e := r.ApplyCommand(c); e != nil {
					err = e
				}
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error = %v, want one containing %q", err, tc.err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := r.Maintenance(); !proto.Equal(got, tc.want) {
				t.Fatalf("Maintenance() = %v, want %v", got, tc.want)
			}
			var buf bytes.Buffer
			if err := r.WriteSnapshot(&buf); err != nil {
				t.Fatal(err)
			}
			back := NewRegistry()
			if err := back.Restore(readCloser(buf.Bytes())); err != nil {
				t.Fatal(err)
			}
			if got := back.Maintenance(); !proto.Equal(got, tc.want) {
				t.Fatalf("after snapshot and restore: %v, want %v", got, tc.want)
			}
		})
	}
}
