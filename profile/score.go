package profile

import (
	"fmt"
	"math"
	"time"
)

// PaperEta is the paper's eta: OverallScore = (1-eta) O + eta F with 0.3,
// so over-allocation weighs more than fragmentation.
const PaperEta = 0.3

// Normalization says how the disk and network scores are made comparable
// before their Euclidean norm is taken.
type Normalization int

const (
	// NormPaper is the paper's method: F and O are raw areas in MB (MB/s x
	// s), so a resource with a larger capacity (disk at 330 MB/s against a
	// 125 MB/s NIC) weighs more in the norm.
	NormPaper Normalization = iota
	// NormCapacity divides each resource's F and O by the server's capacity
	// of it, giving seconds of the whole device wasted or over-committed:
	// both resources count alike whatever their scale (beyond the paper). A resource the server advertises none of scores 0 if the
	// executor never demands it and +Inf otherwise, since no fraction of
	// nothing can serve it.
	NormCapacity
)

func (n Normalization) String() string {
	switch n {
	case NormPaper:
		return "paper"
	case NormCapacity:
		return "capacity"
	}
	return fmt.Sprintf("Normalization(%d)", int(n))
}

// ParseNormalization reads a flag value: "paper" or "capacity".
func ParseNormalization(s string) (Normalization, error) {
	for _, n := range []Normalization{NormPaper, NormCapacity} {
		if s == n.String() {
			return n, nil
		}
	}
	return 0, fmt.Errorf("normalisation %q: want paper or capacity", s)
}

// Options parameterise Score. The zero value is not the paper's: use
// PaperOptions and change what you need.
type Options struct {
	// Eta weighs fragmentation against over-allocation, in [0, 1].
	Eta       float64
	Normalize Normalization
}

// PaperOptions are the paper's settings.
var PaperOptions = Options{Eta: PaperEta, Normalize: NormPaper}

// Validate reports a bad eta or normalisation.
func (o Options) Validate() error {
	if math.IsNaN(o.Eta) || o.Eta < 0 || o.Eta > 1 {
		return fieldErr("eta", "%v is not in [0, 1]", o.Eta)
	}
	if o.Normalize != NormPaper && o.Normalize != NormCapacity {
		return fieldErr("normalize", "unknown %v", o.Normalize)
	}
	return nil
}

// Score is Prophet's verdict on one executor placed on one server, with its
// parts so that a decision can explain itself without recomputing.
type Score struct {
	// F and O are the weighted fragmentation and over-allocation areas per
	// resource (eqs. 1-7): MB under NormPaper, seconds under NormCapacity.
	F, O [NumResources]float64
	// Overall is (1-eta) O + eta F per resource (eq. 8).
	Overall [NumResources]float64
	// Norm is the Euclidean norm of Overall: smaller is better.
	Norm float64
}

// Score places an executor with profile p on the server at now and returns
// its fragmentation and over-allocation against the predicted availability
// (eqs. 1-8). p must have passed Validate and o must be valid; Score checks
// neither because the allocator calls it for every server x candidate in a
// cycle, and it allocates nothing. With 0 < eta < 1, Norm is 0 exactly when
// the demand equals the (clamped) availability throughout every stage; the
// fixed point makes that comparison exact.
//
// Where the paper is silent:
//   - Availability below zero counts as zero. The paper's Fig. 4 shades
//     availability between demand and capacity, never below; and O is meant
//     to measure the contention this placement adds. With a signed
//     availability an executor that needs nothing during an existing
//     overload would be charged for it, and every candidate on an overloaded
//     server would carry the same offset.
//   - Only the time inside the executor's stages is scored (eqs. 1-2 sum
//     over stages k); a gap between stages adds neither F nor O.
//   - The stage weight uses the stage's index, w_k = 1 - k/n, as the paper
//     does, not its distance in time.
func (t *Timeline) Score(now time.Time, p *Profile, o Options) Score {
	var f, ov [NumResources]float64
	base := now.UnixNano()
	pts := t.pts
	capFree := [NumResources]float64{float64(t.cap[Disk]), float64(t.cap[Net])}
	j := 0
	if len(p.Stages) > 0 {
		j = t.upper(base + int64(p.Stages[0].Start))
	}
	for k := range p.Stages {
		st := &p.Stages[k]
		peak := [NumResources]float64{float64(quantize(st.DiskBW)), float64(quantize(st.NetBW))}
		at, end := base+int64(st.Start), base+int64(st.End)
		for j < len(pts) && pts[j].at <= at {
			j++
		}
		// Unweighted areas of this stage; w_k applies once at its end.
		var sf, so [NumResources]float64
		for at < end {
			free := &capFree // before the first breakpoint
			if j > 0 {
				free = &pts[j-1].free
			}
			to := end
			if j < len(pts) && pts[j].at < end {
				to = pts[j].at
				j++
			}
			dt := float64(to - at)
			for r := range peak {
				if d := peak[r] - free[r]; d > 0 {
					so[r] += d * dt
				} else {
					sf[r] -= d * dt
				}
			}
			at = to
		}
		w := p.Weight(k)
		for r := range f {
			f[r] += w * sf[r]
			ov[r] += w * so[r]
		}
	}
	return t.finish(f, ov, o)
}

// finish converts the integer-unit areas to MB (or seconds), applies eta
// and takes the norm.
func (t *Timeline) finish(f, ov [NumResources]float64, o Options) Score {
	var s Score
	for r := range f {
		div := float64(scale) * 1e9 // thousandths x ns -> MB
		if o.Normalize == NormCapacity {
			if t.cap[r] == 0 {
				if ov[r] > 0 {
					ov[r] = math.Inf(1)
				}
				div = 1 // F is zero: nothing is available to waste
			} else {
				div *= float64(t.cap[r]) / scale
			}
		}
		s.F[r] = f[r] / div
		s.O[r] = ov[r] / div
		// Skip a zero-weighted term so that an infinite O (NormCapacity on a
		// server without the resource) with eta = 1 gives F, not NaN.
		if o.Eta < 1 {
			s.Overall[r] += (1 - o.Eta) * s.O[r]
		}
		if o.Eta > 0 {
			s.Overall[r] += o.Eta * s.F[r]
		}
	}
	s.Norm = math.Sqrt(s.Overall[Disk]*s.Overall[Disk] + s.Overall[Net]*s.Overall[Net])
	return s
}

// Combine says how the scores of an application's E executors, each on its
// own server, become the application's score.
type Combine int

const (
	// CombineMean averages the E per-server norms (the default). Algorithm 1
	// compares executors, so the per-executor average keeps an application
	// of ten executors comparable with one of one; a sum would make large
	// applications lose every comparison until their deadline forces them.
	CombineMean Combine = iota
	// CombineSum adds them: the application's total weighted area, the
	// literal reading of "the areas an application creates".
	CombineSum
	// CombineMax takes the worst server: an application is as slow as its
	// slowest executor, so one badly placed executor dominates.
	CombineMax
)

func (c Combine) String() string {
	switch c {
	case CombineMean:
		return "mean"
	case CombineSum:
		return "sum"
	case CombineMax:
		return "max"
	}
	return fmt.Sprintf("Combine(%d)", int(c))
}

// ParseCombine reads a flag value: "mean", "sum" or "max".
func ParseCombine(s string) (Combine, error) {
	for _, c := range []Combine{CombineMean, CombineSum, CombineMax} {
		if s == c.String() {
			return c, nil
		}
	}
	return 0, fmt.Errorf("combine %q: want mean, sum or max", s)
}

// AppScore combines the norms of an application's executors on their
// chosen (distinct) servers; it is 0 for no scores.
func AppScore(c Combine, norms []float64) float64 {
	if len(norms) == 0 {
		return 0
	}
	var acc float64
	for _, v := range norms {
		if c == CombineMax {
			acc = max(acc, v)
		} else {
			acc += v
		}
	}
	if c == CombineMean {
		acc /= float64(len(norms))
	}
	return acc
}
