package allocator

import (
	"bufio"
	"crypto/sha256"
	"flag"
	"fmt"
	"hash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/resources"
)

// The role-aware cycle's decisions, recorded: every offer (framework,
// agent, role, resources, reserved pools, score, order) of seeded random
// clusters with nested roles, multi-role frameworks, quota, reservations,
// suppression and filters, digested per case. The cycle is made faster
// from time to time; a change that moves any offer fails here, and the
// digests are rewritten (-update-role-decisions) only for a change meant
// to decide differently. Each case is also played with Config.bruteForce,
// where the picks scan every member of a role rather than read the role
// orders (roleorder.go), and must decide the same.

var updateRoleDecisions = flag.Bool("update-role-decisions", false, "rewrite testdata/role_decisions.golden from what the role-aware cycle decides now")

const roleDecisionsFile = "testdata/role_decisions.golden"

// roleDecisionCase is one recorded run: its name and how to play it.
type roleDecisionCase struct {
	name string
	play func(t *testing.T, h hash.Hash, brute bool) int // returns the offers made
}

// writeOffers digests one cycle's offers in order.
func writeOffers(h hash.Hash, cycle int, out []Offer) {
	for _, o := range out {
		fmt.Fprintf(h, "%d %s %s %s %s tasks=%d score=%x", cycle, o.Framework, o.Agent, o.Role, o.Resources, o.Tasks, o.Reason.Score)
		for _, pool := range keys(o.Reserved) {
			fmt.Fprintf(h, " [%s: %s]", pool, o.Reserved[pool])
		}
		fmt.Fprintln(h)
	}
}

// roleDecisionCases are the property driver's random sequences (roles
// with few frameworks each, every event kind) under every criterion and
// both modes, and a decline-heavy cluster shaped like the benchmark (many
// frameworks to a role, ties in the keys, filters on most agents).
func roleDecisionCases() []roleDecisionCase {
	var cases []roleDecisionCase
	for _, crit := range allCriteria {
		for _, mode := range []Mode{Oblivious, Characterized} {
			for seed := uint64(1); seed <= 3; seed++ {
				cases = append(cases, roleDecisionCase{
					name: fmt.Sprintf("driver/%s/%s/seed=%d", crit, mode, seed),
					play: func(t *testing.T, h hash.Hash, brute bool) int { return playRoleDriver(t, h, crit, mode, seed, brute) },
				})
			}
		}
		for seed := uint64(1); seed <= 2; seed++ {
			cases = append(cases, roleDecisionCase{
				name: fmt.Sprintf("declines/%s/seed=%d", crit, seed),
				play: func(t *testing.T, h hash.Hash, brute bool) int { return playDeclines(t, h, crit, seed, brute) },
			})
		}
	}
	return cases
}

// playRoleDriver runs the role property driver's random events, with
// demands declared now and then in characterized mode, digesting every
// cycle's offers.
func playRoleDriver(t *testing.T, h hash.Hash, crit string, mode Mode, seed uint64, brute bool) int {
	d := newRoleDriver(t, crit, seed)
	d.fx = newFixture(t, Config{Sorter: mustLookup(t, crit), Mode: mode, Seed: seed, bruteForce: brute})
	offers, cycle := 0, 0
	d.onCycle = func(out []Offer) {
		writeOffers(h, cycle, out)
		offers += len(out)
		cycle++
	}
	for i := 0; i < 500; i++ {
		if mode == Characterized && len(d.fws) > 0 && d.rng.IntN(20) == 0 {
			id := d.pick(keys(d.fws))
			task := resources.MustParse(fmt.Sprintf("cpus:%d;mem:%d", 1+d.rng.IntN(3), 128*(1+d.rng.IntN(4))))
			n := d.rng.IntN(5) - 1
			d.must(d.fx.a.SetDemand(id, Demand{Task: task, Tasks: n}))
			d.idle[id] = n == 0
		}
		d.step()
	}
	return offers
}

// playDeclines is the benchmark's decline cycle on a small cluster:
// frameworks ten to a role over nested roles, a few multi-role, quota on
// some roles, reservations on some agents; every offer is declined with a
// filter, a few are kept, and now and then a role is suppressed or
// revived.
func playDeclines(t *testing.T, h hash.Hash, crit string, seed uint64, brute bool) int {
	rng := rand.New(rand.NewPCG(seed, 1127))
	fx := newFixture(t, Config{Sorter: mustLookup(t, crit), Seed: seed, bruteForce: brute})
	a := fx.a
	roles := []string{"r0", "r0/a", "r0/b", "r1", "r2", "r2/c", "r2/c/d", "r3"}
	shapes := []string{"cpus:24;mem:4096;disk:4096;ports:[31000-32000]", "cpus:8;mem:16384;disk:1024", "cpus:4;mem:2048;gpus:1"}
	for i := 0; i < 120; i++ {
		fx.agent(fmt.Sprintf("agent-%d", i), shapes[rng.IntN(len(shapes))])
	}
	var fws []string
	for i := 0; i < 60; i++ {
		id := fmt.Sprintf("framework-%d", i)
		fx.framework(id, roles[i%len(roles)])
		if i%7 == 3 {
			fx.roles(id, roles[i%len(roles)], roles[(i+3)%len(roles)])
		}
		fws = append(fws, id)
	}
	for _, q := range [][3]string{
		{"r0", "cpus:60;mem:16384", "cpus:600;mem:163840"},
		{"r0/a", "cpus:20;mem:4096", "cpus:300;mem:81920"},
		{"r2", "cpus:40;mem:8192", "cpus:400;mem:131072"},
		{"r2/c/d", "cpus:10;mem:2048", ""},
		{"r3", "cpus:30;mem:8192", "cpus:300"},
	} {
		fx.quota(q[0], q[1], q[2])
	}
	for i := 0; i < 120; i += 9 {
		fx.reserve(fmt.Sprintf("agent-%d", i), map[string]string{roles[rng.IntN(len(roles))]: "cpus:2;mem:512"})
	}
	var held []Offer
	offers := 0
	for cycle := 0; cycle < 12; cycle++ {
		out := fx.cycle()
		writeOffers(h, cycle, out)
		offers += len(out)
		for _, o := range out {
			if rng.IntN(10) == 0 {
				held = append(held, o)
				continue
			}
			declineOffer(t, a, o, &Filter{RefuseSeconds: float64(1 + rng.IntN(5))})
		}
		if len(held) > 0 && rng.IntN(2) == 0 {
			i := rng.IntN(len(held))
			declineOffer(t, a, held[i], nil)
			held = slices.Delete(held, i, i+1)
		}
		switch id := fws[rng.IntN(len(fws))]; rng.IntN(6) {
		case 0:
			if err := a.SuppressRoles(id, nil); err != nil {
				t.Fatal(err)
			}
		case 1:
			if err := a.ReviveRoles(id, nil); err != nil {
				t.Fatal(err)
			}
		}
		fx.clk.Advance(time.Second)
	}
	return offers
}

// declineOffer gives o back: each pool with its own call, the rest
// unreserved.
func declineOffer(t *testing.T, a *Allocator, o Offer, fl *Filter) {
	t.Helper()
	unres := o.Resources
	for pool, r := range o.Reserved {
		if err := a.RecoverFor(o.Framework, o.Agent, o.Role, pool, r, fl); err != nil {
			t.Fatal(err)
		}
		unres = unres.Sub(r)
	}
	if err := a.RecoverFor(o.Framework, o.Agent, o.Role, "", unres, fl); err != nil {
		t.Fatal(err)
	}
}

// TestRoleCycleDecisionsRecorded plays every case, with the role orders
// and with the scan, and compares each digest with the recorded one.
func TestRoleCycleDecisionsRecorded(t *testing.T) {
	want := readRoleDecisions(t)
	var lines []string
	for _, c := range roleDecisionCases() {
		var got [2]string
		for i, brute := range []bool{false, true} {
			h := sha256.New()
			var n int
			t.Run(fmt.Sprintf("%s/brute=%v", c.name, brute), func(t *testing.T) { n = c.play(t, h, brute) })
			got[i] = fmt.Sprintf("%x %d", h.Sum(nil)[:12], n)
		}
		lines = append(lines, c.name+" "+got[1])
		if got[0] != got[1] {
			t.Errorf("%s: the role orders decide differently from the scan: digest and offers %s, scanning %s", c.name, got[0], got[1])
		}
		if *updateRoleDecisions {
			continue
		}
		if w, ok := want[c.name]; !ok {
			t.Errorf("%s: no recorded decisions (run with -update-role-decisions once the change is meant)", c.name)
		} else if w != got[0] {
			t.Errorf("%s: the role-aware cycle decides differently: digest and offers %s, recorded %s", c.name, got[0], w)
		}
	}
	if *updateRoleDecisions {
		if err := os.MkdirAll(filepath.Dir(roleDecisionsFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(roleDecisionsFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readRoleDecisions(t *testing.T) map[string]string {
	out := map[string]string{}
	f, err := os.Open(roleDecisionsFile)
	if err != nil {
		if *updateRoleDecisions {
			return out
		}
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, _ := strings.Cut(sc.Text(), " ")
		out[name] = rest
	}
	return out
}

// TestMoveRight checks both of moveRight's shifts against moving the node
// by hand, for every position and distance in lists of several lengths,
// with and without room at the end of the backing array.
func TestMoveRight(t *testing.T) {
	for n := 1; n <= 9; n++ {
		for i := 0; i < n; i++ {
			for j := 0; i+j < n; j++ {
				for _, room := range []int{0, 3} {
					nodes := make([]*roleNode, n, n+room)
					for k := range nodes {
						nodes[k] = &roleNode{nameRank: k}
					}
					want := slices.Clone(nodes)
					m := want[i]
					want = slices.Delete(want, i, i+1)
					want = slices.Insert(want, i+j, m)
					if got := moveRight(nodes, i, j); !slices.Equal(got, want) {
						t.Fatalf("n=%d i=%d j=%d room=%d: got %v, want %v", n, i, j, room, ranks(got), ranks(want))
					}
				}
			}
		}
	}
}

func ranks(s []*roleNode) []int {
	var out []int
	for _, n := range s {
		out = append(out, n.nameRank)
	}
	return out
}
