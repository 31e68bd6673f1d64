package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/resources"
)

// Roles is what an operator gives `allot sim --roles FILE` to ask what
// weights, quota and reservations would do to a workload: the simulated
// allocator is given weights and quota before the first job arrives, as
// the master's allocator is given --weights and the registry's quotas on
// election, and reservations as the agents' (reservations.go). A job's role is
// its Job.Role or, where the workload names none (the CSV formats have no
// role column), the role the file gives its framework; "*" otherwise.
//
// The file is JSON:
//
//	{
//	  "frameworks": {"spark-etl": "eng", "trainer": "eng/ml"},
//	  "weights": {"eng": 2, "eng/ml": 1},
//	  "quota": {
//	    "eng":    {"guarantee": {"cpus": 8, "mem": 16384}, "limit": {"cpus": 16}},
//	    "eng/ml": {"guarantee": {"cpus": 4}}
//	  },
//	  "reservations": [
//	    {"agent": "t1-*", "role": "eng", "resources": {"cpus": 4, "mem": 8192}},
//	    {"agent": "t2-1", "role": "eng/ml", "resources": {"gpus": 1}, "at": 600}
//	  ]
//	}
//
// A resource absent from a limit has no limit; a limit of 0 is a limit.
type Roles struct {
	Frameworks map[string]string    `json:"frameworks"`
	Weights    map[string]float64   `json:"weights"`
	Quota      map[string]RoleQuota `json:"quota"`
	// Reservations are static and dynamic reservations on the cluster's
	// agents (reservations.go).
	Reservations []Reservation `json:"reservations"`
}

// roleOf is the role of the workload's framework fw whose jobs name
// jobRole: the job's own, else the file's, else "*".
func (r *Roles) roleOf(fw, jobRole string) string {
	if jobRole != "" {
		return jobRole
	}
	if r != nil && r.Frameworks[fw] != "" {
		return r.Frameworks[fw]
	}
	return resources.Unreserved
}

// RoleQuota is one role's guarantee and limit: scalar name -> amount
// (Mesos's QuotaConfig).
type RoleQuota struct {
	Guarantee map[string]float64 `json:"guarantee"`
	Limit     map[string]float64 `json:"limit"`
}

// ReadRoles decodes a roles file, refusing unknown keys and bad role
// names so that a typo is not silently a role without quota.
func ReadRoles(r io.Reader) (*Roles, error) {
	dec := json.NewDecoder(io.LimitReader(r, 16<<20))
	dec.DisallowUnknownFields()
	var out Roles
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("roles file: %w", err)
	}
	for fw, name := range out.Frameworks {
		if err := resources.ValidateRole(name); err != nil {
			return nil, fmt.Errorf("roles file: framework %s: %w", fw, err)
		}
	}
	for name := range out.Weights {
		if err := resources.ValidateRole(name); err != nil {
			return nil, fmt.Errorf("roles file: weights: %w", err)
		}
	}
	for name, q := range out.Quota {
		if err := resources.ValidateRole(name); err != nil {
			return nil, fmt.Errorf("roles file: quota: %w", err)
		}
		if _, err := q.allocatorQuota(); err != nil {
			return nil, fmt.Errorf("roles file: quota of %s: %w", name, err)
		}
	}
	for i := range out.Reservations {
		if err := out.Reservations[i].check(); err != nil {
			return nil, fmt.Errorf("roles file: reservation %d: %w", i+1, err)
		}
	}
	return &out, nil
}

// allocatorQuota is q as the allocator takes it.
func (q RoleQuota) allocatorQuota() (allocator.Quota, error) {
	var out allocator.Quota
	for _, name := range sortedNames(q.Guarantee) {
		x, err := quotaQuantity(name, q.Guarantee[name])
		if err != nil {
			return out, fmt.Errorf("guarantee: %w", err)
		}
		out.Guarantees = out.Guarantees.WithScalar(name, x)
	}
	for _, name := range sortedNames(q.Limit) {
		x, err := quotaQuantity(name, q.Limit[name])
		if err != nil {
			return out, fmt.Errorf("limit: %w", err)
		}
		out.Limits = out.Limits.WithScalar(name, x)
		out.Limited = append(out.Limited, name)
	}
	return out, nil
}

func quotaQuantity(name string, v float64) (resources.Quantity, error) {
	if name == "" || name == resources.PortsName {
		return 0, fmt.Errorf("%q: only named scalar resources have quota", name)
	}
	if v < 0 {
		return 0, fmt.Errorf("%s: %g is negative", name, v)
	}
	x, err := resources.QuantityFromFloat(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return x, nil
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// apply gives the allocator the weights and then the quotas, parents
// before children (the allocator checks a child's guarantee against its
// parent's).
func (r *Roles) apply(al *allocator.Allocator) error {
	if r == nil {
		return nil
	}
	if len(r.Weights) > 0 {
		if err := al.SetWeights(r.Weights); err != nil {
			return fmt.Errorf("roles file: weights: %w", err)
		}
	}
	names := sortedNames(r.Quota)
	sort.SliceStable(names, func(i, j int) bool { return strings.Count(names[i], "/") < strings.Count(names[j], "/") })
	for _, name := range names {
		q, err := r.Quota[name].allocatorQuota()
		if err == nil {
			err = al.SetQuota(name, q)
		}
		if err != nil {
			return fmt.Errorf("roles file: quota of %s: %w", name, err)
		}
	}
	return nil
}
