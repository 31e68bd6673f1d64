package registry

import (
	"fmt"
	"sort"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// applyQuotaLocked applies QUOTA_UPDATE: every role of the command at once,
// as Mesos applies an UPDATE_QUOTA's configs all or nothing. A record with
// neither guarantees nor limits is the default quota, so the role is
// forgotten. The master validates before it proposes; here only what would
// corrupt the map is refused, so every replica applies the same.
func (r *Registry) applyQuotaLocked(c *api.Command) error {
	if len(c.GetQuotas()) == 0 {
		return fmt.Errorf("registry: QUOTA_UPDATE without quotas")
	}
	for _, q := range c.Quotas {
		if q.GetRole() == "" {
			return fmt.Errorf("registry: QUOTA_UPDATE with a quota without a role")
		}
	}
	for _, q := range c.Quotas {
		if len(q.Guarantees) == 0 && len(q.Limits) == 0 {
			delete(r.quotas, q.Role)
			continue
		}
		r.quotas[q.Role] = q
	}
	return nil
}

// Quotas returns every role's quota that is not the default, sorted by role.
func (r *Registry) Quotas() []*api.QuotaRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.quotaRecordsLocked()
}

func (r *Registry) quotaRecordsLocked() []*api.QuotaRecord {
	out := make([]*api.QuotaRecord, 0, len(r.quotas))
	for _, q := range r.quotas {
		out = append(out, proto.Clone(q).(*api.QuotaRecord))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Role < out[j].Role })
	return out
}

// quotaSnapshotRecords is the quotas as snapshot records, in role order.
func (r *Registry) quotaSnapshotRecords() []*api.SnapshotRecord {
	var out []*api.SnapshotRecord
	for _, q := range r.Quotas() {
		out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_Quota{Quota: q}})
	}
	return out
}
