package registry

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// The maintenance record: the schedule, the machines DOWN and the agents
// deactivated or drained (the master's maintenance.go and drain.go). The
// registry holds at most one and each MAINTENANCE_SET replaces it whole:
// the leader builds it from its live state under its lock and proposes in
// that order, so the last one applied is the newest.

// applyMaintenance applies MAINTENANCE_SET. Caller holds r.mu.
func (r *Registry) applyMaintenance(c *api.Command) error {
	if c.GetMaintenance() == nil {
		return fmt.Errorf("registry: MAINTENANCE_SET without a maintenance record")
	}
	r.maint = c.Maintenance
	return nil
}

// Maintenance returns the maintenance record, nil if none was ever set.
func (r *Registry) Maintenance() *api.MaintenanceRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.maint == nil {
		return nil
	}
	return proto.Clone(r.maint).(*api.MaintenanceRecord)
}

// maintenanceRecords is the maintenance record as a snapshot lists it.
func (r *Registry) maintenanceRecords() []*api.SnapshotRecord {
	m := r.Maintenance()
	if m == nil {
		return nil
	}
	return []*api.SnapshotRecord{{Record: &api.SnapshotRecord_Maintenance{Maintenance: m}}}
}
