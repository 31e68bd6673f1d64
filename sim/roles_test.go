package sim_test

import (
	"strings"
	"testing"

	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sim/trace"
)

// A roles file puts the workload's framework in a role, and that role's
// limit holds it to half the cluster: the makespan doubles (plus the
// allocation interval the second wave waits for its offers), as the
// production allocator would have it.
func TestRolesFileLimitShowsInTheRun(t *testing.T) {
	nodes, _ := trace.ParseCluster("2xcpus=4,mem=4096")
	w := &sim.Workload{Nodes: nodes, Jobs: []sim.Job{{ID: "a", Framework: "f", Stages: []sim.Stage{{Groups: []sim.Group{{Tasks: 8, Duration: 10, Demand: sim.Shape(1, 512)}}}}}}}
	roles, err := sim.ReadRoles(strings.NewReader(`{"frameworks": {"f": "eng/ml"}, "weights": {"eng": 2},
		"quota": {"eng": {"guarantee": {"cpus": 2}, "limit": {"cpus": 4}}, "eng/ml": {"guarantee": {"cpus": 1}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range bothModes {
		for _, tt := range []struct {
			roles    *sim.Roles
			min, max float64
		}{{nil, 10, 10}, {roles, 20, 21}} {
			r, err := sim.Run(w, sim.Config{Policy: mustPolicy(t, "drf"), Mode: m, Roles: tt.roles, Check: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.Makespan < tt.min || r.Makespan > tt.max {
				t.Errorf("%s, roles %v: makespan %v, want %v to %v", m, tt.roles != nil, r.Makespan, tt.min, tt.max)
			}
		}
	}
}

// A roles file with a mistake is refused with what is wrong, not run as if
// the role had no quota.
func TestReadRolesRefusesMistakes(t *testing.T) {
	for _, tt := range []struct{ file, want string }{
		{`{"quota": {"eng": {"limits": {"cpus": 1}}}}`, `unknown field "limits"`},
		{`{"quota": {"eng//x": {"limit": {"cpus": 1}}}}`, "two adjacent slashes"},
		{`{"weights": {"-eng": 2}}`, "starts with a dash"},
		{`{"frameworks": {"f": "a/../b"}}`, "framework f"},
		{`{"quota": {"eng": {"guarantee": {"cpus": -1}}}}`, "quota of eng: guarantee: cpus: -1 is negative"},
		{`{"quota": {"eng": {"limit": {"ports": 10}}}}`, "only named scalar resources have quota"},
		{`{"reservations": [{"agent": "a1", "role": "*", "resources": {"cpus": 1}}]}`, "reservation 1: role \"*\" is the unreserved role"},
		{`{"reservations": [{"agent": "a1", "role": "eng", "resources": {"net_bw": 1}}]}`, `"net_bw" cannot be reserved`},
		{`{"reservations": [{"agent": "a1", "role": "eng", "resources": {"cpus": -2}}]}`, "cpus: -2 is negative"},
		{`{"reservations": [{"agent": "a1", "role": "eng", "resources": {}}]}`, "reserves nothing"},
		{`{"reservations": [{"agent": "a[", "role": "eng", "resources": {"cpus": 1}}]}`, `agent "a[" is not a node id or pattern`},
		{`{"reservations": [{"agent": "a1", "role": "eng", "resources": {"cpus": 1}, "at": -1}]}`, "at -1: want seconds"},
		{`{"reservations": [{"agent": "a1", "role": "eng", "resources": {"cpus": 1}, "until": 5}]}`, `unknown field "until"`},
	} {
		if _, err := sim.ReadRoles(strings.NewReader(tt.file)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.file, err, tt.want)
		}
	}
}
