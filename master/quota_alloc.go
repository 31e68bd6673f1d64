package master

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/resources"
)

// allocatorQuota is rec as the allocator takes it: Limited names what has
// a limit, so a limit of 0 is not mistaken for none. A value the registry
// holds was validated on its way in; one that still does not convert
// (out of Quantity's range) counts as 0.
func allocatorQuota(rec *api.QuotaRecord) allocator.Quota {
	var q allocator.Quota
	for name, v := range rec.Guarantees {
		x, _ := resources.QuantityFromFloat(v)
		q.Guarantees = q.Guarantees.WithScalar(name, x)
	}
	for name, v := range rec.Limits {
		x, _ := resources.QuantityFromFloat(v)
		q.Limits = q.Limits.WithScalar(name, x)
		q.Limited = append(q.Limited, name)
	}
	sort.Strings(q.Limited)
	return q
}

// applyQuotasLocked gives recs, now durable, to the allocator. Each role
// is first reset and then set shallowest first: every step then holds
// less than the validated end state, so no step breaks the allocator's
// parent-and-children check on the way. Caller holds m.mu.
func (m *Master) applyQuotasLocked(recs []*api.QuotaRecord) {
	for _, q := range recs {
		m.allocOK("set_quota", m.alloc.SetQuota(q.Role, allocator.Quota{}), "role", q.Role)
	}
	for _, q := range sortedQuotaRoles(recs) {
		if len(q.Guarantees) == 0 && len(q.Limits) == 0 {
			continue
		}
		m.allocOK("set_quota", m.alloc.SetQuota(q.Role, allocatorQuota(q)), "role", q.Role)
	}
	m.setQuotaGauges()
}

// restoreQuotasLocked gives a new leader's allocator the registry's
// quotas. Caller holds m.mu.
func (m *Master) restoreQuotasLocked() {
	m.applyQuotasLocked(m.reg.Quotas())
}

// quotaGauges are the quotas this leader's allocator holds, per role and
// resource, as Mesos's allocator/mesos/quota/roles/<role>/resources/<r>/
// guarantee and .../limit: what an operator alerts on beside what the
// role is allocated.
type quotaGauges struct {
	guarantee, limit *prometheus.GaugeVec
}

// initQuotaMetrics registers the gauges the first time this master gives
// its allocator the quotas (its first election), under m.mu.
func (m *Master) initQuotaMetrics() {
	g := &m.quotaGauges
	g.guarantee = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "allot_master_quota_guarantee",
		Help: "Each role's quota guarantee, by resource (UPDATE_QUOTA)."}, []string{"role", "resource"})
	g.limit = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "allot_master_quota_limit",
		Help: "Each role's quota limit, by resource; a resource without a limit has no series."}, []string{"role", "resource"})
	m.m.reg.MustRegister(g.guarantee, g.limit)
}

// setQuotaGauges makes the gauges say what the registry holds. Caller
// holds m.mu.
func (m *Master) setQuotaGauges() {
	g := &m.quotaGauges
	if g.guarantee == nil {
		m.initQuotaMetrics()
	}
	g.guarantee.Reset()
	g.limit.Reset()
	for _, q := range m.reg.Quotas() {
		for name, v := range q.Guarantees {
			g.guarantee.WithLabelValues(q.Role, name).Set(v)
		}
		for name, v := range q.Limits {
			g.limit.WithLabelValues(q.Role, name).Set(v)
		}
	}
}
