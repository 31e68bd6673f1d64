package sim_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
)

// launches records, per framework, the agents its tasks launched on and
// when.
type launches map[string][]sim.Event

func (l launches) Observe(e sim.Event) {
	if e.Kind == sim.EventLaunch {
		l[e.Framework] = append(l[e.Framework], e)
	}
}

// resvWorkload is two 4-cpu agents, a framework "batch" (role *) with
// batchTasks one-cpu tasks of 10 s at t=0, and a framework "etl" of role
// eng with four such tasks at etlAt.
func resvWorkload(t *testing.T, batchTasks int, etlAt float64) *sim.Workload {
	t.Helper()
	nodes, err := trace.ParseCluster("2xcpus=4,mem=4096")
	if err != nil {
		t.Fatal(err)
	}
	job := func(id, fw string, at float64, n int) sim.Job {
		return sim.Job{ID: id, Framework: fw, Submit: at, Stages: []sim.Stage{{Groups: []sim.Group{{Tasks: n, Duration: 10, Demand: sim.Shape(1, 512)}}}}}
	}
	return &sim.Workload{Nodes: nodes, Jobs: []sim.Job{job("b", "batch", 0, batchTasks), job("e", "etl", etlAt, 4)}}
}

func readRoles(t *testing.T, s string) *sim.Roles {
	t.Helper()
	r, err := sim.ReadRoles(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func runResv(t *testing.T, w *sim.Workload, m allocator.Mode, roles *sim.Roles) (*sim.Result, launches) {
	t.Helper()
	l := launches{}
	r, err := sim.Run(w, sim.Config{Policy: mustPolicy(t, "drf"), Mode: m, Roles: roles, Check: true, Observer: l})
	if err != nil {
		t.Fatal(err)
	}
	return r, l
}

func jobStart(t *testing.T, r *sim.Result, id string) float64 {
	t.Helper()
	for _, j := range r.JobStats {
		if j.ID == id {
			return j.Start
		}
	}
	t.Fatalf("no job %s in the result", id)
	return 0
}

func roleStat(t *testing.T, r *sim.Result, role string) sim.RoleStat {
	t.Helper()
	for _, s := range r.Roles {
		if s.Role == role {
			return s
		}
	}
	t.Fatalf("no role %s in the result's roles %+v", role, r.Roles)
	return sim.RoleStat{}
}

// A static reservation of one agent for role eng: the batch framework
// (role *) is never offered it, even with work waiting, and eng's job
// starts on it at the first allocation after it arrives. Without the
// reservation batch takes the whole cluster and eng waits for its tasks.
func TestStaticReservationKeepsAgentForItsRole(t *testing.T) {
	w := resvWorkload(t, 8, 1)
	roles := readRoles(t, `{"frameworks": {"etl": "eng"},
		"reservations": [{"agent": "t1-1", "role": "eng", "resources": {"cpus": 4, "mem": 4096}}]}`)
	for _, m := range bothModes {
		plain, _ := runResv(t, w, m, readRoles(t, `{"frameworks": {"etl": "eng"}}`))
		if s := jobStart(t, plain, "e"); s < 10 {
			t.Errorf("%s, no reservation: eng's job started at %v, want it to wait for batch's tasks (10)", m, s)
		}
		r, l := runResv(t, w, m, roles)
		for _, e := range l["batch"] {
			if e.Agent == "t1-1" {
				t.Errorf("%s: batch launched %d tasks on the agent reserved for eng at %v", m, e.Tasks, e.Time)
			}
		}
		if s := jobStart(t, r, "e"); s < 1 || s > 2 {
			t.Errorf("%s: eng's job started at %v, want within an interval of its arrival (1)", m, s)
		}
		for _, e := range l["etl"] {
			if e.Agent != "t1-1" {
				t.Errorf("%s: eng's tasks launched on %s, want its reservation t1-1 (t1-2 is busy)", m, e.Agent)
			}
		}
		if r.Makespan != 20 {
			t.Errorf("%s: makespan %v, want 20 (batch's 8 tasks on the one agent left to it)", m, r.Makespan)
		}
		// The report by role says the same: eng waits no more than an
		// interval with its reservation, and holds a quarter of the cpus
		// over the run (4 tasks of 10 s, 8 cpus, 20 s) either way.
		for _, tt := range []struct {
			r              *sim.Result
			waitLo, waitHi float64
		}{{plain, 9, 10}, {r, 0, 1}} {
			eng := roleStat(t, tt.r, "eng")
			if eng.Jobs != 1 || eng.MeanWait < tt.waitLo || eng.MeanWait > tt.waitHi || eng.Share["cpus"] != 0.25 {
				t.Errorf("%s: role eng %+v, want 1 job waiting %v to %v s and a cpus share of 0.25", m, eng, tt.waitLo, tt.waitHi)
			}
			if star := roleStat(t, tt.r, "*"); star.Jobs != 1 || star.Share["cpus"] != 0.5 {
				t.Errorf("%s: role * %+v, want 1 job and a cpus share of 0.5", m, star)
			}
		}
	}
}

// A dynamic reservation asked for at t=5, while batch's tasks use the
// whole cluster, is made when they end at t=10 (running tasks are not
// preempted): from then on batch gets only the other agent and eng's job,
// arriving at t=12, starts at once on the reserved one.
func TestDynamicReservationMadeWhenFree(t *testing.T) {
	w := resvWorkload(t, 16, 12)
	roles := readRoles(t, `{"frameworks": {"etl": "eng"},
		"reservations": [{"agent": "t1-1", "role": "eng", "resources": {"cpus": 4, "mem": 4096}, "at": 5}]}`)
	for _, m := range bothModes {
		plain, _ := runResv(t, w, m, readRoles(t, `{"frameworks": {"etl": "eng"}}`))
		if s := jobStart(t, plain, "e"); s < 20 {
			t.Errorf("%s, no reservation: eng's job started at %v, want it to wait for batch's tasks (20)", m, s)
		}
		r, l := runResv(t, w, m, roles)
		before := 0
		for _, e := range l["batch"] {
			if e.Agent == "t1-1" {
				if e.Time >= 10 {
					t.Errorf("%s: batch launched %d tasks on t1-1 at %v, after the reservation was made", m, e.Tasks, e.Time)
				}
				before += e.Tasks
			}
		}
		if before != 4 {
			t.Errorf("%s: batch ran %d tasks on t1-1 before the reservation, want 4 (the reservation waits for them)", m, before)
		}
		if s := jobStart(t, r, "e"); s < 12 || s > 13 {
			t.Errorf("%s: eng's job started at %v, want within an interval of its arrival (12)", m, s)
		}
	}
}

// Reservations the cluster cannot hold, or that name no agent, stop the
// run before it starts.
func TestReservationsRefusedByTheCluster(t *testing.T) {
	w := resvWorkload(t, 1, 0)
	for _, tt := range []struct{ file, want string }{
		{`{"reservations": [{"agent": "n9", "role": "eng", "resources": {"cpus": 1}}]}`, `reservation 1: agent "n9" matches no node`},
		{`{"reservations": [{"agent": "t1-*", "role": "eng", "resources": {"cpus": 3}}, {"agent": "t1-2", "role": "ops", "resources": {"cpus": 2}}]}`, "exceed the agent's total"},
	} {
		_, err := sim.Run(w, sim.Config{Roles: readRoles(t, tt.file)})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.file, err, tt.want)
		}
	}
}

// outsiders tracks what frameworks outside a role run on each agent.
type outsiders struct {
	t       *testing.T
	inRole  map[string]bool
	used    map[string]resources.Vector
	limit   map[string]resources.Vector // what outsiders may use on an agent
	checked int
}

func (o *outsiders) Observe(e sim.Event) {
	if o.inRole[e.Framework] {
		return
	}
	d := e.Demand.Times(int64(e.Tasks))
	d[resources.DiskBW], d[resources.NetBW] = 0, 0
	if e.Kind == sim.EventFinish {
		o.used[e.Agent] = o.used[e.Agent].Sub(d)
		return
	}
	o.used[e.Agent] = o.used[e.Agent].Add(d)
	if lim, ok := o.limit[e.Agent]; ok {
		o.checked++
		if !lim.Contains(o.used[e.Agent]) {
			o.t.Errorf("t=%v: frameworks outside eng use %v of agent %s, whose unreserved part is %v", e.Time, o.used[e.Agent], e.Agent, lim)
		}
	}
}

// Under every policy and mode, with a static reservation on some agents
// and a dynamic one on another, the simulator's books agree with the
// allocator's after every cycle (Config.Check), every job finishes, and
// frameworks outside the role never run on the reserved part.
func TestReservationsUnderEveryPolicy(t *testing.T) {
	nodes, err := trace.ParseCluster("3xcpus=8,mem=16G,disk_bw=100,net_bw=50+2xcpus=4,mem=32G,disk_bw=60")
	if err != nil {
		t.Fatal(err)
	}
	w := &sim.Workload{Name: "synthetic", Nodes: nodes, Jobs: sim.SyntheticJobs(sim.SyntheticSpec{Jobs: 40, Frameworks: 5, MeanInterarrival: 2, Bandwidth: true, Seed: 7})}
	eng := map[string]bool{w.Jobs[0].Framework: true}
	for _, j := range w.Jobs {
		if len(eng) < 2 && !eng[j.Framework] {
			eng[j.Framework] = true
		}
	}
	fws := `{`
	for fw := range eng {
		if fws != `{` {
			fws += `, `
		}
		fws += `"` + fw + `": "eng"`
	}
	roles := readRoles(t, `{"frameworks": `+fws+`},
		"reservations": [{"agent": "t1-*", "role": "eng", "resources": {"cpus": 4, "mem": 8192}},
			{"agent": "t2-1", "role": "eng", "resources": {"cpus": 2, "mem": 16384}, "at": 10}]}`)
	for _, m := range bothModes {
		for _, pname := range allPolicies {
			t.Run(fmt.Sprintf("%s/%s", m, pname), func(t *testing.T) {
				p := mustPolicy(t, pname)
				if p.Check(m) != nil {
					t.Skip("combination rejected by the allocator")
				}
				lim := sim.Shape(4, 8192) // t1 nodes' 8 cpus and 16 GB less the reservation
				o := &outsiders{t: t, inRole: eng, used: map[string]resources.Vector{}, limit: map[string]resources.Vector{"t1-1": lim, "t1-2": lim, "t1-3": lim}}
				r, err := sim.Run(w, sim.Config{Policy: p, Mode: m, Seed: 5, Roles: roles, Check: true, Observer: o})
				if err != nil {
					t.Fatal(err)
				}
				if r.Jobs != len(w.Jobs) || o.checked == 0 {
					t.Errorf("%d jobs ran, %d launches on reserved agents checked", r.Jobs, o.checked)
				}
			})
		}
	}
}
