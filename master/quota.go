package master

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mquota "github.com/mesos/mesos-go/api/v1/lib/quota"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

// Quota: guarantees and limits per role, as Mesos's UPDATE_QUOTA (and the
// older SET_QUOTA, REMOVE_QUOTA and /quota) set them. The registry holds
// the truth (QUOTA_UPDATE); the leader validates a change against it,
// proposes it, and only once it is durable gives it to the allocator, so
// an allocator never holds a quota a new leader would not restore.
// quotaMu orders whole updates: two updates validated against the same
// registry state could each be valid and together break the tree.

// Mesos's bounds on a quota value: 1 exabyte in MB for mem and disk, a
// trillion for anything else.
const (
	quotaMaxMB    = float64(1 << 40)
	quotaMaxOther = 1e12
)

// quotaConfigRecord is c as the registry keeps it, validated as Mesos's
// quota::validate does. The error is Mesos's text without its prefix.
func quotaConfigRecord(c mquota.QuotaConfig, principal string) (*api.QuotaRecord, error) {
	if c.Role == "" {
		return nil, fmt.Errorf("'QuotaConfig.role' must be set")
	}
	if err := resources.ValidateRole(c.Role); err != nil {
		return nil, fmt.Errorf("Invalid 'QuotaConfig.role': %v", err)
	}
	if c.Role == resources.Unreserved {
		return nil, fmt.Errorf("Invalid 'QuotaConfig.role': the default role '*' cannot have a quota")
	}
	rec := &api.QuotaRecord{Role: c.Role, Principal: principal}
	var err error
	if rec.Guarantees, err = quotaScalars(c.Guarantees, "guarantee"); err != nil {
		return nil, err
	}
	if rec.Limits, err = quotaScalars(c.Limits, "limit"); err != nil {
		return nil, err
	}
	for name, g := range rec.Guarantees {
		if l, limited := rec.Limits[name]; limited && g > l {
			return nil, fmt.Errorf("'QuotaConfig.guarantees' %s is not contained within the 'QuotaConfig.limits' %s",
				scalarsString(rec.Guarantees), scalarsString(rec.Limits))
		}
	}
	return rec, nil
}

// quotaScalars is one of QuotaConfig's maps, each value checked as Mesos
// checks input scalars; ports is not a scalar here and has no quota.
func quotaScalars(in map[string]mesos.Value_Scalar, what string) (map[string]float64, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]float64, len(in))
	for _, name := range sortedKeys(in) {
		v := in[name].Value
		if err := quotaValueError(name, v); err != nil {
			return nil, fmt.Errorf("Invalid %s configuration {'%s': %s}: %v", what, name, fmtScalar(v), err)
		}
		out[name] = v
	}
	return out, nil
}

func quotaValueError(name string, v float64) error {
	switch {
	case name == "" || name == resources.PortsName:
		return fmt.Errorf("only named scalar resources have quota")
	case math.IsInf(v, 0):
		return fmt.Errorf("Infinite values not supported")
	case math.IsNaN(v):
		return fmt.Errorf("NaN not supported")
	case v < 0:
		return fmt.Errorf("Negative values not supported")
	case (name == "mem" || name == "disk") && v > quotaMaxMB:
		return fmt.Errorf("values greater than 1 exabyte (%d) are not supported", int64(quotaMaxMB))
	case name != "mem" && name != "disk" && v > quotaMaxOther:
		return fmt.Errorf("values greater than 1 trillion (%d) are not supported", int64(quotaMaxOther))
	}
	return nil
}

func fmtScalar(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// scalarsString is a name -> amount map as error texts show it, in name
// order: {cpus: 4, mem: 1024}.
func scalarsString(m map[string]float64) string {
	parts := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+": "+fmtScalar(m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// validateQuotaTree checks that every role with a guarantee guarantees at
// least what its nearest descendants with quota are guaranteed together
// (a parent's guarantee is its subtree's), and that no role is guaranteed
// or may use more of a resource than its nearest ancestor with quota may
// use. A role without a guarantee bounds no guarantees (Mesos would read
// it as a guarantee of nothing, but Mesos 1.11 sets no quota on nested
// roles at all).
func validateQuotaTree(all map[string]*api.QuotaRecord) error {
	sums := map[string]map[string]float64{}
	for _, role := range sortedKeys(all) {
		parent := nearestQuotaAncestor(all, role)
		if parent == "" {
			continue
		}
		if err := withinParentLimit(role, all[role], parent, all[parent]); err != nil {
			return err
		}
		if sums[parent] == nil {
			sums[parent] = map[string]float64{}
		}
		for k, v := range all[role].Guarantees {
			sums[parent][k] += v
		}
	}
	for _, parent := range sortedKeys(sums) {
		g := all[parent].Guarantees
		if len(g) == 0 {
			continue
		}
		for k, v := range sums[parent] {
			if v > g[k]+1e-9 {
				return fmt.Errorf("Parent role '%s' with guarantees (%s) does not contain the sum of its children's guarantees (%s)",
					parent, scalarsString(g), scalarsString(sums[parent]))
			}
		}
	}
	return nil
}

// withinParentLimit checks q, role's quota, against the limits of parent's
// quota pq: a child can neither be guaranteed nor use what its parent may
// not use.
func withinParentLimit(role string, q *api.QuotaRecord, parent string, pq *api.QuotaRecord) error {
	for _, k := range sortedKeys(pq.Limits) {
		lim := pq.Limits[k]
		if g, ok := q.Guarantees[k]; ok && g > lim+1e-9 {
			return fmt.Errorf("Role '%s' with guarantee %s: %s is above the limit of its parent role '%s' (%s: %s)", role, k, fmtScalar(g), parent, k, fmtScalar(lim))
		}
		if l, ok := q.Limits[k]; ok && l > lim+1e-9 {
			return fmt.Errorf("Role '%s' with limit %s: %s is above the limit of its parent role '%s' (%s: %s)", role, k, fmtScalar(l), parent, k, fmtScalar(lim))
		}
	}
	return nil
}

// nearestQuotaAncestor is the closest ancestor of role that has a quota in
// all, "" if none.
func nearestQuotaAncestor(all map[string]*api.QuotaRecord, role string) string {
	for _, a := range resources.RoleAncestors(role) {
		if all[a] != nil {
			return a
		}
	}
	return ""
}

// quotaTotalGuarantees sums the guarantees of the roles whose ancestors
// have no quota: a parent's guarantee already holds its children's.
func quotaTotalGuarantees(all map[string]*api.QuotaRecord) map[string]float64 {
	out := map[string]float64{}
	for role, q := range all {
		if nearestQuotaAncestor(all, role) != "" {
			continue
		}
		for k, v := range q.Guarantees {
			out[k] += v
		}
	}
	return out
}

// clusterCapacityLocked is the scalar total of every registered agent,
// connected or not (Mesos counts them all: a disconnection is usually
// brief). Caller holds m.mu.
func (m *Master) clusterCapacityLocked() map[string]float64 {
	out := map[string]float64{}
	for _, a := range m.agents {
		for name, v := range stateScalars(a.total) {
			out[name] += v
		}
	}
	return out
}

// overcommitError says whether guarantees exceed capacity, as Mesos's
// overcommit check does; nil when they fit.
func overcommitError(guarantees, capacity map[string]float64) error {
	for k, v := range guarantees {
		if v > capacity[k]+1e-9 {
			return fmt.Errorf("total quota guarantees '%s' exceed cluster capacity '%s'", scalarsString(guarantees), scalarsString(capacity))
		}
	}
	return nil
}

// mergedQuotas is the registry's quotas with recs applied over them (a
// record with neither guarantees nor limits resets its role).
func (m *Master) mergedQuotas(recs []*api.QuotaRecord) map[string]*api.QuotaRecord {
	all := map[string]*api.QuotaRecord{}
	for _, q := range m.reg.Quotas() {
		all[q.Role] = q
	}
	for _, q := range recs {
		if len(q.Guarantees) == 0 && len(q.Limits) == 0 {
			delete(all, q.Role)
			continue
		}
		all[q.Role] = q
	}
	return all
}

// authorizeQuota asks update_quota for each role of recs, as Mesos does
// before any of an UPDATE_QUOTA's configs applies.
func (m *Master) authorizeQuota(who auth.Subject, recs []*api.QuotaRecord) error {
	for _, q := range recs {
		if err := m.authorize(who, auth.UpdateQuota, q.Role, false); err != nil {
			return err
		}
	}
	return nil
}

// sortedQuotaRoles is the roles of recs, shallowest first, so that a
// parent is given its quota before its children are.
func sortedQuotaRoles(recs []*api.QuotaRecord) []*api.QuotaRecord {
	out := append([]*api.QuotaRecord(nil), recs...)
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := strings.Count(out[i].Role, "/"), strings.Count(out[j].Role, "/")
		if di != dj {
			return di < dj
		}
		return out[i].Role < out[j].Role
	})
	return out
}

// badQuota is a 400 with Mesos's prefix for the call.
func badQuota(prefix string, err error) error {
	return api.Errorf(http.StatusBadRequest, "%s%v", prefix, err)
}
