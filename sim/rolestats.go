package sim

import (
	"sort"

	"github.com/allot-sched/allot/resources"
)

// RoleStat is what one role's jobs got in a run with a roles file: the
// answer to "what would this quota or reservation do to my workload?",
// role by role.
type RoleStat struct {
	Role     string  `json:"role"`
	Jobs     int     `json:"jobs"`
	JCTMean  float64 `json:"jct_mean_s"`
	MeanWait float64 `json:"mean_wait_s"`
	// Share is, per resource, the mean fraction of the cluster's capacity
	// the role's running tasks held from the first submission to the
	// makespan (the run's Utilization, role by role).
	Share map[string]float64 `json:"share"`
}

// roleBook integrates what a role's running tasks hold over time.
type roleBook struct {
	used  resources.Vector
	since float64
	area  [resources.NumKinds]float64 // units x s
}

func (b *roleBook) accrue(now float64) {
	if dt := now - b.since; dt > 0 {
		for k, q := range b.used {
			b.area[k] += q.Units() * dt
		}
	}
	b.since = now
}

// roleUse books d (a task's reservable demand times its count) as held by
// f's role from now on (sign +1) or no longer (-1); nothing without a
// roles file.
func (e *engine) roleUse(f *simFramework, d resources.Vector, sign int) {
	if e.cfg.Roles == nil {
		return
	}
	if e.roleBooks == nil {
		e.roleBooks = map[string]*roleBook{}
	}
	b := e.roleBooks[f.role]
	if b == nil {
		b = &roleBook{since: e.now}
		e.roleBooks[f.role] = b
	}
	b.accrue(e.now)
	if sign > 0 {
		b.used = b.used.Add(d)
	} else {
		b.used = b.used.Sub(d)
	}
}

// roleStats summarises the run by role, sorted by name; nil without a
// roles file. span is the makespan (seconds from the first submission).
func (e *engine) roleStats(stats []JobStat, span float64) []RoleStat {
	if e.cfg.Roles == nil {
		return nil
	}
	byRole := map[string]*RoleStat{}
	stat := func(role string) *RoleStat {
		if byRole[role] == nil {
			byRole[role] = &RoleStat{Role: role, Share: map[string]float64{}}
		}
		return byRole[role]
	}
	for _, j := range stats {
		s := stat(e.fws[e.fwIx[j.Framework]].role)
		s.Jobs++
		s.JCTMean += j.JCT()
		s.MeanWait += j.Start - j.Arrive
	}
	for role, b := range e.roleBooks {
		b.accrue(e.now)
		s := stat(role)
		for _, k := range e.m.kinds {
			if !k.Advisory() && span > 0 {
				s.Share[k.String()] = Round(b.area[k] / (e.m.capacity[k] * span))
			}
		}
	}
	out := make([]RoleStat, 0, len(byRole))
	for _, s := range byRole {
		if s.Jobs > 0 {
			s.JCTMean, s.MeanWait = Round(s.JCTMean/float64(s.Jobs)), Round(s.MeanWait/float64(s.Jobs))
		}
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Role < out[j].Role })
	return out
}
