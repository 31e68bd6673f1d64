package profile

import (
	"fmt"
	"math"
	"time"
)

// Resource names one of the two bandwidths Prophet scores.
type Resource int

const (
	Disk Resource = iota // disk_bw, MB/s
	Net                  // net_bw, MB/s
	NumResources
)

// String is the resource's name in allot's resource vocabulary.
func (r Resource) String() string {
	if r == Disk {
		return "disk_bw"
	}
	return "net_bw"
}

// Bounds that Validate enforces. They are sanity caps, not tuning knobs: a
// profile beyond them is a bug in its producer, and refusing it keeps the
// fixed-point sums and launch+offset arithmetic far from int64 overflow.
const (
	// MaxStages bounds the stages of one executor profile. The paper's
	// SparkBench applications have a handful; 64 leaves room for iterative
	// jobs while keeping a score at most 64 stages x a server's breakpoints.
	MaxStages = 64
	// MaxExecutors bounds E. Gang placement needs E distinct servers and the
	// largest cluster allot benchmarks has 10,000.
	MaxExecutors = 10000
	// MaxOffset bounds a stage's end offset from the executor's launch.
	// Predictions a month out are noise, and the bound keeps launch+offset
	// representable as Unix nanoseconds.
	MaxOffset = 30 * 24 * time.Hour
	// MaxBandwidth bounds a stage's peak (MB/s): 1 TB/s, far above any NIC
	// or disk array, so the thousandths fit int64 with room for sums.
	MaxBandwidth = 1e6
	// MaxCpus and MaxMem bound the per-executor reservation (cpus, MB).
	MaxCpus = 1e6
	MaxMem  = 1e9
)

// Stage is one stage k of an executor's predicted demand: from Start to End
// after the executor's launch it needs up to DiskBW and NetBW (MB/s, the
// stage's peaks). The stage occupies [Start, End).
//
// Offsets are time.Duration, not float seconds: they anchor at a launch
// time.Time from the allocator's injected clock, and integer nanoseconds make
// launch+offset exact, so two executors' stage boundaries that coincide merge
// into one breakpoint instead of leaving a sliver segment one ulp wide, and a
// removed executor takes away exactly the breakpoints it added. Peaks stay
// float64 MB/s, the unit predictors and offers speak; the timeline quantizes
// them to thousandths, as resources.Quantity does.
type Stage struct {
	Start, End    time.Duration
	DiskBW, NetBW float64
}

// Peak returns the stage's peak of r.
func (s Stage) Peak(r Resource) float64 {
	if r == Disk {
		return s.DiskBW
	}
	return s.NetBW
}

// Profile is an executor's predicted demand: stages k = 0..n-1, ordered and
// non-overlapping (gaps are allowed and mean no demand). An empty profile is
// valid and means "no prediction": it scores 0 everywhere, so a policy must
// decide itself what an unprofiled application is worth.
type Profile struct {
	Stages []Stage
}

// Life is the offset at which the last stage ends (0 for an empty profile).
func (p *Profile) Life() time.Duration {
	if len(p.Stages) == 0 {
		return 0
	}
	return p.Stages[len(p.Stages)-1].End
}

// Weight returns the paper's stage weight w_k = 1 - k/n: near stages are
// predicted better than far ones, so they count more.
func (p *Profile) Weight(k int) float64 {
	return 1 - float64(k)/float64(len(p.Stages))
}

// Validate reports the first problem with p as a *FieldError naming the
// field, e.g. "stages[2].end: before start".
func (p *Profile) Validate() error {
	if len(p.Stages) > MaxStages {
		return fieldErr("stages", "%d stages, more than the cap of %d", len(p.Stages), MaxStages)
	}
	var prevEnd time.Duration
	for k, s := range p.Stages {
		f := func(name string) string { return fmt.Sprintf("stages[%d].%s", k, name) }
		switch {
		case s.Start < 0:
			return fieldErr(f("start"), "negative (%v)", s.Start)
		case s.End < s.Start:
			return fieldErr(f("end"), "before start (%v < %v)", s.End, s.Start)
		case s.End == s.Start:
			return fieldErr(f("end"), "equals start: a stage must last")
		case s.End > MaxOffset:
			return fieldErr(f("end"), "%v is beyond the cap of %v", s.End, MaxOffset)
		case k > 0 && s.Start < prevEnd:
			return fieldErr(f("start"), "%v overlaps or precedes stages[%d] (ends %v); stages must be ordered and disjoint", s.Start, k-1, prevEnd)
		}
		for r := Resource(0); r < NumResources; r++ {
			// name the field only on failure: the allocator validates every
			// executor it anchors, and formatting the name each time cost
			// more than the rest of an Add
			if v := s.Peak(r); !(v >= 0 && v <= MaxBandwidth) {
				return checkAmount(f(r.String()), v, MaxBandwidth, true)
			}
		}
		prevEnd = s.End
	}
	return nil
}

// AppDemand is what a framework declares for one application: E executors,
// each reserving Cpus and Mem (MB) for its whole life, each expected to
// follow Profile from its launch.
type AppDemand struct {
	Executors int
	Cpus, Mem float64
	Profile   Profile
}

// Validate reports the first problem with d as a *FieldError.
func (d *AppDemand) Validate() error {
	switch {
	case d.Executors < 1:
		return fieldErr("executors", "must be >= 1, got %d", d.Executors)
	case d.Executors > MaxExecutors:
		return fieldErr("executors", "%d is more than the cap of %d", d.Executors, MaxExecutors)
	}
	// An executor that reserves no cpu or no memory cannot be placed by the
	// cpu/mem fit that picks Prophet's candidates; the paper's users always
	// specify both.
	if err := checkAmount("cpus", d.Cpus, MaxCpus, false); err != nil {
		return err
	}
	if err := checkAmount("mem", d.Mem, MaxMem, false); err != nil {
		return err
	}
	return d.Profile.Validate()
}

func checkAmount(field string, v, max float64, zeroOK bool) error {
	switch {
	case math.IsNaN(v):
		return fieldErr(field, "NaN")
	case math.IsInf(v, 0):
		return fieldErr(field, "infinite")
	case v < 0:
		return fieldErr(field, "negative (%v)", v)
	case v == 0 && !zeroOK:
		return fieldErr(field, "must be > 0")
	case v > max:
		return fieldErr(field, "%v is more than the cap of %v", v, max)
	}
	return nil
}

// FieldError is a validation failure of one field. Its text is
// "field: problem", ready for a 400 answer.
type FieldError struct {
	Field, Problem string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Problem: fmt.Sprintf(format, args...)}
}
