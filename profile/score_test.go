package profile

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func near(a, b float64) bool {
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

type running1 struct {
	launch int
	p      *Profile
}

// scoreCase is a timeline (device capacities and running executors), a
// candidate profile, and the fragmentation F, over-allocation O and norm
// worked out by hand for it.
type scoreCase struct {
	name      string
	disk, net float64
	running   []running1
	cand      *Profile
	opts      *Options // nil: PaperOptions
	F, O      [NumResources]float64
	norm      float64
}

// scoreCases each isolate one rule of the score.
var scoreCases = []scoreCase{
	{
		name: "single stage fits: O = 0, F = the idle area",
		disk: 100, net: 50, cand: prof(st(0, 10, 40, 0)),
		F: [2]float64{60 * 10, 50 * 10}, norm: math.Hypot(0.3*600, 0.3*500),
	},
	{
		name: "exact fit scores 0",
		disk: 100, net: 50, cand: prof(st(0, 10, 100, 50)),
	},
	{
		name: "stage over availability: O = excess x time x w0",
		disk: 100, running: []running1{{0, prof(st(0, 20, 80, 0))}},
		cand: prof(st(0, 10, 50, 0)),
		O:    [2]float64{30 * 10}, norm: 0.7 * 300,
	},
	{
		name: "stage across a breakpoint: part O, part F",
		disk: 100, running: []running1{{0, prof(st(0, 10, 80, 0))}},
		cand: prof(st(5, 15, 50, 0)),
		F:    [2]float64{50 * 5}, O: [2]float64{30 * 5}, norm: 0.7*150 + 0.3*250,
	},
	{
		name: "running executor launched earlier, anchored at its launch",
		disk: 100, running: []running1{{-30, prof(st(0, 20, 90, 0), st(20, 40, 40, 0))}},
		cand: prof(st(0, 10, 60, 0)),
		// avail: 60 on [0,10): exact fit.
	},
	{
		name: "two stages, weights 1 and 1/2",
		disk: 100, running: []running1{{0, prof(st(10, 30, 90, 0))}},
		cand: prof(st(0, 10, 100, 0), st(10, 30, 40, 0)),
		// stage 0 exact; stage 1 over by 30 for 20 s at weight 0.5.
		O: [2]float64{30 * 20 * 0.5}, norm: 0.7 * 300,
	},
	{
		name: "three stages, weights 1, 2/3, 1/3, with a gap that is not scored",
		disk: 100, cand: prof(st(0, 3, 70, 0), st(10, 13, 40, 0), st(13, 16, 100, 0)),
		// F: 30x3x1 + 60x3x(2/3) + 0 = 90 + 120; the gap 3..10 is free.
		F: [2]float64{90 + 120}, norm: 0.3 * 210,
	},
	{
		name: "disk and network combine by the Euclidean norm",
		disk: 100, net: 50, running: []running1{{0, prof(st(0, 20, 80, 0))}},
		cand: prof(st(0, 10, 50, 10)),
		F:    [2]float64{0, 40 * 10}, O: [2]float64{30 * 10, 0},
		norm: math.Hypot(0.7*300, 0.3*400),
	},
	{
		name: "negative availability clamps at zero",
		disk: 100, running: []running1{{0, prof(st(0, 20, 150, 0))}},
		cand: prof(st(0, 10, 20, 0), st(10, 20, 0, 0)),
		// stage 0: 20 over a zero availability (not 70); stage 1 needs
		// nothing during the overload and costs nothing.
		O: [2]float64{20 * 10}, norm: 0.7 * 200,
	},
	{
		name: "eta = 0 ignores fragmentation",
		disk: 100, cand: prof(st(0, 10, 10, 0)), opts: &Options{Eta: 0},
		F: [2]float64{900},
	},
	{
		name: "capacity normalisation: areas in seconds of the device",
		disk: 100, net: 50, cand: prof(st(0, 10, 40, 0)),
		opts: &Options{Eta: 0.3, Normalize: NormCapacity},
		F:    [2]float64{600.0 / 100, 500.0 / 50}, norm: math.Hypot(0.3*6, 0.3*10),
	},
	{
		name: "capacity normalisation without the resource: +Inf",
		disk: 100, cand: prof(st(0, 10, 100, 5)),
		opts: &Options{Eta: 0.3, Normalize: NormCapacity},
		O:    [2]float64{0, math.Inf(1)}, norm: math.Inf(1),
	},
	{
		name: "capacity normalisation without the resource, eta 1: not NaN",
		disk: 100, cand: prof(st(0, 10, 100, 5)),
		opts: &Options{Eta: 1, Normalize: NormCapacity},
		O:    [2]float64{0, math.Inf(1)}, norm: 0,
	},
	{
		name: "empty profile scores 0",
		disk: 100, net: 50, cand: prof(),
	},
}

// TestScoreHandComputed checks the areas against arithmetic done by hand.
// Capacities are disk 100 and net 50 MB/s unless a case says otherwise;
// areas are MB (MB/s x s).
func TestScoreHandComputed(t *testing.T) {
	for _, tc := range scoreCases {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTL(t, tc.disk, tc.net)
			for i, r := range tc.running {
				mustAdd(t, tl, fmt.Sprint(i), at(r.launch), r.p)
			}
			o := PaperOptions
			if tc.opts != nil {
				o = *tc.opts
			}
			got := tl.Score(at(0), tc.cand, o)
			for r := range got.F {
				if !near(got.F[r], tc.F[r]) || !near(got.O[r], tc.O[r]) {
					t.Errorf("%v: F %v O %v, want F %v O %v", Resource(r), got.F[r], got.O[r], tc.F[r], tc.O[r])
				}
			}
			if !near(got.Norm, tc.norm) {
				t.Errorf("norm %v, want %v (%+v)", got.Norm, tc.norm, got)
			}
		})
	}
}

func TestAppScore(t *testing.T) {
	norms := []float64{1, 4, 7}
	for _, tc := range []struct {
		c    Combine
		want float64
	}{{CombineMean, 4}, {CombineSum, 12}, {CombineMax, 7}} {
		if got := AppScore(tc.c, norms); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.c, got, tc.want)
		}
		if got := AppScore(tc.c, nil); got != 0 {
			t.Errorf("%v of nothing: %v", tc.c, got)
		}
	}
}

func TestParseFlags(t *testing.T) {
	for _, n := range []Normalization{NormPaper, NormCapacity} {
		if got, err := ParseNormalization(n.String()); got != n || err != nil {
			t.Errorf("ParseNormalization(%v) = %v, %v", n, got, err)
		}
	}
	for _, c := range []Combine{CombineMean, CombineSum, CombineMax} {
		if got, err := ParseCombine(c.String()); got != c || err != nil {
			t.Errorf("ParseCombine(%v) = %v, %v", c, got, err)
		}
	}
	if _, err := ParseNormalization("raw"); err == nil {
		t.Error("ParseNormalization(raw) succeeded")
	}
	if _, err := ParseCombine("median"); err == nil {
		t.Error("ParseCombine(median) succeeded")
	}
}

// refScore is eqs. 1-8 written out literally: every (availability stage s,
// executor stage k) pair, the four overlap cases of eqs. 4-7, in float64.
func refScore(tl *Timeline, now time.Time, p *Profile, o Options) Score {
	var f, ov [NumResources]float64
	horizon := now.Add(p.Life() + sec)
	for k, stg := range p.Stages {
		w := p.Weight(k)
		ts, te := now.Add(stg.Start), now.Add(stg.End)
		for s := range tl.Segments(now, horizon) {
			Ts, Te := s.Start, s.End
			var d time.Duration
			switch {
			case !te.After(Ts) || !Te.After(ts): // eq. 3
				continue
			case !ts.After(Ts) && !Te.After(te): // eq. 4
				d = Te.Sub(Ts)
			case !ts.After(Ts) && !te.After(Te): // eq. 5
				d = te.Sub(Ts)
			case !Ts.After(ts) && !Te.After(te): // eq. 6
				d = Te.Sub(ts)
			default: // eq. 7
				d = te.Sub(ts)
			}
			for r := Resource(0); r < NumResources; r++ {
				a, pk := math.Max(s.Avail(r), 0), stg.Peak(r)
				area := math.Abs(pk-a) * d.Seconds() * w
				if pk <= a {
					f[r] += area
				} else {
					ov[r] += area
				}
			}
		}
	}
	var out Score
	for r := Resource(0); r < NumResources; r++ {
		c := 1.0
		if o.Normalize == NormCapacity {
			c = tl.Capacity(r)
		}
		out.F[r], out.O[r] = f[r]/c, ov[r]/c
		out.Overall[r] = (1-o.Eta)*out.O[r] + o.Eta*out.F[r]
	}
	out.Norm = math.Hypot(out.Overall[0], out.Overall[1])
	return out
}

// The one-pass merge agrees with the literal equations on random servers.
func TestPropertyScoreMatchesEquations(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := range 500 {
		tl := randTimeline(t, rng, rng.IntN(10))
		if tl.Capacity(Net) == 0 {
			tl.SetCapacity(tl.Capacity(Disk), 1) // keep NormCapacity finite
		}
		cand := randProfile(rng, 8)
		now := at(rng.IntN(100) - 50)
		for _, o := range []Options{PaperOptions, {Eta: 0.6, Normalize: NormCapacity}} {
			got, want := tl.Score(now, cand, o), refScore(tl, now, cand, o)
			for r := range got.F {
				if !near(got.F[r], want.F[r]) || !near(got.O[r], want.O[r]) {
					t.Fatalf("iter %d %v %v: got F %v O %v, want F %v O %v", iter, o.Normalize, Resource(r), got.F[r], got.O[r], want.F[r], want.O[r])
				}
			}
			if !near(got.Norm, want.Norm) {
				t.Fatalf("iter %d: norm %v, want %v", iter, got.Norm, want.Norm)
			}
		}
	}
}

// matching builds a profile that follows the availability exactly from now
// on (clamped at zero), one stage per availability segment.
func matching(tl *Timeline, now time.Time, life time.Duration) *Profile {
	p := &Profile{}
	for s := range tl.Segments(now, now.Add(life)) {
		p.Stages = append(p.Stages, Stage{
			Start: s.Start.Sub(now), End: s.End.Sub(now),
			DiskBW: math.Max(s.DiskBW, 0), NetBW: math.Max(s.NetBW, 0),
		})
	}
	return p
}

// Score is 0 iff the demand equals the (clamped) availability over the
// whole life of the profile: the matching profile scores exactly 0, and
// changing any one peak of it by a thousandth (the fixed point's unit)
// makes the score positive.
func TestPropertyScoreZeroIffExactMatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for iter := range 300 {
		tl := randTimeline(t, rng, 1+rng.IntN(6))
		now := at(rng.IntN(60) - 30)
		p := matching(tl, now, time.Duration(1+rng.IntN(120))*sec)
		if len(p.Stages) > MaxStages {
			continue
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("iter %d: matching profile invalid: %v", iter, err)
		}
		if s := tl.Score(now, p, PaperOptions); s.Norm != 0 {
			t.Fatalf("iter %d: exact match scores %+v", iter, s)
		}
		k, r := rng.IntN(len(p.Stages)), Resource(rng.IntN(2))
		q := *p
		q.Stages = append([]Stage(nil), p.Stages...)
		delta := 0.001
		if q.Stages[k].Peak(r) > 0 && rng.IntN(2) == 0 {
			delta = -0.001
		}
		if r == Disk {
			q.Stages[k].DiskBW += delta
		} else {
			q.Stages[k].NetBW += delta
		}
		if s := tl.Score(now, &q, PaperOptions); !(s.Norm > 0) {
			t.Fatalf("iter %d: stage %d %v off by %v still scores %v", iter, k, r, delta, s.Norm)
		}
	}
}

// BenchmarkTimelineScore scores one six-stage executor against a server
// running 20 executors of five stages each, all still running at now (the
// timeline has about 100 breakpoints ahead): the allocator's inner loop.
func BenchmarkTimelineScore(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	tl := newTL(b, 330, 125)
	for i := range 20 {
		p := &Profile{}
		off := 0
		for range 5 {
			d := 30 + rng.IntN(90)
			p.Stages = append(p.Stages, st(off, off+d, float64(rng.IntN(80)), float64(rng.IntN(40))))
			off += d
		}
		mustAdd(b, tl, fmt.Sprint("e", i), at(-rng.IntN(100)), p)
	}
	cand := prof(st(0, 30, 120, 5), st(30, 60, 20, 80), st(60, 90, 200, 0), st(90, 150, 10, 60), st(150, 200, 50, 50), st(200, 260, 0, 100))
	now := at(0)
	b.ReportAllocs()
	var sink float64
	for b.Loop() {
		sink += tl.Score(now, cand, PaperOptions).Norm
	}
	_ = sink
	b.ReportMetric(float64(tl.Breakpoints()), "breakpoints")
}

// BenchmarkTimelineAddRemove is the cost of an executor launching and
// ending on that server.
func BenchmarkTimelineAddRemove(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 10))
	tl := newTL(b, 330, 125)
	for i := range 20 {
		mustAdd(b, tl, fmt.Sprint("e", i), at(-rng.IntN(300)), randProfile(rng, 5))
	}
	p := randProfile(rng, 5)
	b.ReportAllocs()
	for b.Loop() {
		if err := tl.Add("x", at(0), p); err != nil {
			b.Fatal(err)
		}
		tl.Remove("x")
	}
}
