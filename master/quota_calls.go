package master

import (
	"fmt"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	mquota "github.com/mesos/mesos-go/api/v1/lib/quota"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// quotaCall is how one of Mesos's quota calls words its errors.
type quotaCall struct {
	name   string // the call, for a registry failure
	prefix string // before each validation error
	// overcommit answers guarantees above the cluster's capacity.
	overcommit func(error) error
}

var (
	updateQuotaCall = quotaCall{name: "UPDATE_QUOTA", prefix: "Invalid QuotaConfig: ", overcommit: func(err error) error {
		return api.Errorf(http.StatusBadRequest, "Invalid QuotaConfig: %v (use 'force' flag to bypass this check)", err)
	}}
	setQuotaCall = quotaCall{name: "SET_QUOTA", prefix: "Failed to validate set quota request: ", overcommit: func(err error) error {
		return api.Errorf(http.StatusConflict, "Quota guarantees overcommit the cluster (use 'force' to bypass this check): %v", err)
	}}
	removeQuotaCall = quotaCall{name: "REMOVE_QUOTA", prefix: "Failed to remove quota: "}
)

// rolesOperatorCall answers UPDATE_QUOTA, SET_QUOTA, REMOVE_QUOTA,
// GET_QUOTA and GET_ROLES for who; handled is false for any other call.
// Takes m.quotaMu and m.mu.
func (m *Master) rolesOperatorCall(who auth.Subject, call *mmaster.Call) (resp *mmaster.Response, handled bool, err error) {
	switch call.Type {
	case mmaster.Call_GET_ROLES:
		m.mu.Lock()
		defer m.mu.Unlock()
		return &mmaster.Response{Type: mmaster.Response_GET_ROLES, GetRoles: m.getRolesLocked(who)}, true, nil
	case mmaster.Call_UPDATE_QUOTA:
		if call.UpdateQuota == nil {
			return nil, true, api.Errorf(http.StatusBadRequest, "UPDATE_QUOTA call without update_quota")
		}
		return nil, true, m.updateQuota(who, call.UpdateQuota.QuotaConfigs, call.UpdateQuota.GetForce())
	case mmaster.Call_SET_QUOTA:
		if call.SetQuota == nil {
			return nil, true, api.Errorf(http.StatusBadRequest, "SET_QUOTA call without set_quota")
		}
		return nil, true, m.setQuota(who, call.SetQuota.QuotaRequest)
	case mmaster.Call_REMOVE_QUOTA:
		if call.RemoveQuota == nil {
			return nil, true, api.Errorf(http.StatusBadRequest, "REMOVE_QUOTA call without remove_quota")
		}
		return nil, true, m.removeQuota(who, call.RemoveQuota.Role, removeQuotaCall)
	case mmaster.Call_GET_QUOTA:
		st := m.quotaStatus(who)
		return &mmaster.Response{Type: mmaster.Response_GET_QUOTA, GetQuota: &mmaster.Response_GetQuota{Status: st}}, true, nil
	}
	return nil, false, nil
}

// updateQuota is UPDATE_QUOTA: every config valid and allowed, or none
// applies.
func (m *Master) updateQuota(who auth.Subject, configs []mquota.QuotaConfig, force bool) error {
	if len(configs) == 0 {
		return api.Errorf(http.StatusBadRequest, "UPDATE_QUOTA: update_quota.quota_configs is empty")
	}
	seen := map[string]bool{}
	recs := make([]*api.QuotaRecord, 0, len(configs))
	for _, c := range configs {
		rec, err := quotaConfigRecord(c, who.Principal)
		if err != nil {
			return badQuota(updateQuotaCall.prefix, err)
		}
		if seen[rec.Role] {
			return badQuota(updateQuotaCall.prefix, fmt.Errorf("role '%s' appears in more than one QuotaConfig", rec.Role))
		}
		seen[rec.Role] = true
		recs = append(recs, rec)
	}
	if err := m.authorizeQuota(who, recs); err != nil {
		return err
	}
	return m.commitQuota(recs, force, updateQuotaCall)
}

// setQuota is the older SET_QUOTA: a guarantee that is also the limit,
// for a role without quota.
func (m *Master) setQuota(who auth.Subject, req mquota.QuotaRequest) error {
	rec, err := quotaRequestRecord(req, who.Principal)
	if err != nil {
		return badQuota(setQuotaCall.prefix, err)
	}
	if err := m.authorizeQuota(who, []*api.QuotaRecord{rec}); err != nil {
		return err
	}
	for _, q := range m.reg.Quotas() {
		if q.Role == rec.Role {
			return badQuota(setQuotaCall.prefix, fmt.Errorf("Cannot set quota for role '%s' which already has quota", rec.Role))
		}
	}
	return m.commitQuota([]*api.QuotaRecord{rec}, req.GetForce(), setQuotaCall)
}

// quotaRequestRecord is a SET_QUOTA request as the registry keeps it,
// validated as Mesos validates a QuotaInfo.
func quotaRequestRecord(req mquota.QuotaRequest, principal string) (*api.QuotaRecord, error) {
	if req.GetRole() == "" {
		return nil, fmt.Errorf("QuotaInfo must specify a role")
	}
	if len(req.Guarantee) == 0 {
		return nil, fmt.Errorf("QuotaInfo with empty 'guarantee'")
	}
	cfg := mquota.QuotaConfig{Role: req.GetRole(), Guarantees: map[string]mesos.Value_Scalar{}}
	for _, r := range req.Guarantee {
		switch {
		case len(r.Reservations) > 0 || r.Role != nil && *r.Role != "*" || r.Reservation != nil:
			return nil, fmt.Errorf("QuotaInfo must not contain any ReservationInfo")
		case r.Disk != nil:
			return nil, fmt.Errorf("QuotaInfo must not contain DiskInfo")
		case r.Revocable != nil:
			return nil, fmt.Errorf("QuotaInfo must not contain RevocableInfo")
		case r.GetType() != mesos.SCALAR || r.Scalar == nil:
			return nil, fmt.Errorf("QuotaInfo must not include non-scalar resources")
		}
		if _, dup := cfg.Guarantees[r.Name]; dup {
			return nil, fmt.Errorf("QuotaInfo contains duplicate resource name '%s'", r.Name)
		}
		cfg.Guarantees[r.Name] = *r.Scalar
	}
	rec, err := quotaConfigRecord(cfg, principal)
	if err != nil {
		return nil, err
	}
	rec.Limits = map[string]float64{}
	for k, v := range rec.Guarantees {
		rec.Limits[k] = v
	}
	return rec, nil
}

// removeQuota is REMOVE_QUOTA (and DELETE /quota/<role>): the role goes
// back to the default quota.
func (m *Master) removeQuota(who auth.Subject, role string, qc quotaCall) error {
	rec := &api.QuotaRecord{Role: role}
	if err := m.authorizeQuota(who, []*api.QuotaRecord{rec}); err != nil {
		return err
	}
	found := false
	for _, q := range m.reg.Quotas() {
		found = found || q.Role == role
	}
	if !found {
		return badQuota(qc.prefix, fmt.Errorf("Role '%s' has no quota set", role))
	}
	return m.commitQuota([]*api.QuotaRecord{rec}, true, qc)
}

// commitQuota validates recs against the registry's quotas (the role tree
// and, unless force, the cluster's capacity), proposes them and, once they
// are durable, gives them to the allocator. Takes m.quotaMu, then m.mu.
func (m *Master) commitQuota(recs []*api.QuotaRecord, force bool, qc quotaCall) error {
	m.quotaMu.Lock()
	defer m.quotaMu.Unlock()
	all := m.mergedQuotas(recs)
	if err := validateQuotaTree(all); err != nil {
		return badQuota(qc.prefix, err)
	}
	if !force {
		m.mu.Lock()
		capacity := m.clusterCapacityLocked()
		m.mu.Unlock()
		if err := overcommitError(quotaTotalGuarantees(all), capacity); err != nil {
			return qc.overcommit(err)
		}
	}
	if err := m.rep.proposeWait(&api.Command{Type: api.CommandType_QUOTA_UPDATE, Quotas: recs}); err != nil {
		return api.Errorf(http.StatusServiceUnavailable, "%s: registry: %v", qc.name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.applyQuotasLocked(recs)
	m.triggerAllocation()
	return nil
}

// quotaStatus is GET_QUOTA's answer: every role's quota but the default
// that who may view (view_roles), as Mesos 1.11's infos (guarantees only)
// and configs.
func (m *Master) quotaStatus(who auth.Subject) mquota.QuotaStatus {
	st := mquota.QuotaStatus{Infos: []mquota.QuotaInfo{}, Configs: []mquota.QuotaConfig{}}
	for _, q := range m.reg.Quotas() {
		if m.authorize(who, auth.ViewRoles, q.Role, true) != nil {
			continue
		}
		role := q.Role
		info := mquota.QuotaInfo{Role: &role}
		cfg := mquota.QuotaConfig{Role: role}
		for _, name := range sortedKeys(q.Guarantees) {
			v := q.Guarantees[name]
			if v == 0 {
				continue
			}
			info.Guarantee = append(info.Guarantee, mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}})
		}
		cfg.Guarantees = scalarMap(q.Guarantees)
		cfg.Limits = scalarMap(q.Limits)
		st.Infos = append(st.Infos, info)
		st.Configs = append(st.Configs, cfg)
	}
	return st
}

func scalarMap(in map[string]float64) map[string]mesos.Value_Scalar {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]mesos.Value_Scalar, len(in))
	for k, v := range in {
		out[k] = mesos.Value_Scalar{Value: v}
	}
	return out
}
