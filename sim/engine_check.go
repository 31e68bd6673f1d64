package sim

import (
	"fmt"

	"github.com/allot-sched/allot/resources"
)

// check compares the simulator's books with the allocator's: every agent's
// running tasks fit in it, the allocator counts at least the running
// tasks of each framework as allocated, and its available plus allocated
// equals the agent's total.
func (e *engine) check() error {
	used := map[[2]int32]resources.Vector{}
	for ri := range e.runs {
		r := &e.runs[ri]
		if !r.live {
			continue
		}
		g := &e.groups[r.group]
		k := [2]int32{int32(e.jobs[g.job].fw), r.agent}
		used[k] = used[k].Add(g.res.Times(int64(r.count)))
	}
	for ai := range e.agents {
		a := &e.agents[ai]
		if !reservable(a.total).Contains(reservable(a.used)) {
			return fmt.Errorf("agent %q over-allocated: %s in use of %s", a.id, fmtVec(a.used), fmtVec(a.total))
		}
		st, err := e.al.Agent(a.id)
		if err != nil {
			return err
		}
		sum := st.Available.Reservable().Scalars
		for fid, res := range st.Allocated {
			sum = sum.Add(res.Scalars)
			if fi, ok := e.fwIx[fid]; ok {
				if u := used[[2]int32{int32(fi), int32(ai)}]; !res.Scalars.Contains(u) {
					return fmt.Errorf("agent %q: framework %q runs %s but the allocator counts %s", a.id, fid, fmtVec(u), res)
				}
			}
		}
		if reservable(sum) != reservable(a.total) {
			return fmt.Errorf("agent %q: available plus allocated is %s, total %s", a.id, fmtVec(sum), fmtVec(a.total))
		}
	}
	return nil
}

// StuckError reports jobs that can no longer make progress.
type StuckError struct {
	Time float64
	Jobs []string // the first few
	N    int
	Why  string
}

func (e *StuckError) Error() string {
	return fmt.Sprintf("t=%.1fs: %d job(s) can never finish (%s): %v", e.Time, e.N, e.Why, e.Jobs)
}

func (e *engine) stuck() error {
	se := &StuckError{Time: e.now}
	for i := range e.jobs {
		j := &e.jobs[i]
		if j.done {
			continue
		}
		se.N++
		if len(se.Jobs) < 5 {
			se.Jobs = append(se.Jobs, j.job.where(nil))
		}
	}
	se.Why = "nothing runs and no offer fits their tasks"
	return se
}

func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("sim: allocator refused a call the simulator checked: %v", err))
	}
}
