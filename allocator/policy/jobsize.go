package policy

import (
	"fmt"
	"math"
)

// JobSize declares Framework's head job to the size-based policies (FSP,
// FSPY): the job's size in MB x s (memory times time over
// all its tasks, the paper's eq. 5), whether that size is known (or
// predicted) or only an initial guess, its average parallelism bound and
// the memory of its application master.
type JobSize struct {
	// Framework is the framework declaring; not part of the job.
	Framework string
	// Job names the job. Declaring a different name starts a new job for
	// the framework (a framework running several jobs declares its head
	// job); the same name updates the job, as when a prediction arrives
	// for a job declared of unknown size.
	Job string
	// Known says Size is the job's known or predicted size. When false
	// the job is of unknown size and Size is its initial size S_init
	// (0: infinite, so it never leaves the virtual cluster before the real
	// job finishes, which the paper asks of an initial size).
	Known bool
	// Size is S in MB x s: finite, > 0 when Known, >= 0 otherwise.
	Size float64
	// APB is the job's average parallelism bound in MB of memory: the most
	// the virtual fair cluster gives it. Finite and > 0.
	APB float64
	// AM is the memory (MB) of the job's application master, which the
	// virtual cluster gives the job but which does no work: a job's
	// virtual size shrinks at (virtual resource - AM) MB per second.
	// Finite, >= 0 and below APB.
	AM float64
	// APBCPUs is the job's average parallelism bound in cpus, for a
	// virtual cluster that shares cpus and memory by DRF (sorter.FSP.DRF);
	// 0: not declared, the job's share is its memory's alone. Finite and
	// >= 0.
	APBCPUs float64
	// Probe says the framework runs a probing job (FSPY's probing queue)
	// rather than a production one: it does not enter the virtual
	// cluster; Known, Size and AM are ignored and APB is the memory the
	// probe holds (its one uber-mode container). FSP serves probes FIFO
	// within its probing share (sorter.FSP).
	Probe bool
}

// Validate reports the first thing wrong with s.
func (s JobSize) Validate() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case s.Job == "":
		return fmt.Errorf("job size: the job has no name")
	case !finite(s.Size) || s.Size < 0:
		return fmt.Errorf("job size of %q: size %v MB x s, want a finite number >= 0", s.Job, s.Size)
	case s.Known && s.Size == 0:
		return fmt.Errorf("job size of %q: a known size must be > 0", s.Job)
	case !finite(s.APB) || s.APB <= 0:
		return fmt.Errorf("job size of %q: apb %v MB, want a finite number > 0", s.Job, s.APB)
	case !finite(s.APBCPUs) || s.APBCPUs < 0:
		return fmt.Errorf("job size of %q: apb cpus %v, want a finite number >= 0", s.Job, s.APBCPUs)
	case !finite(s.AM) || s.AM < 0 || s.AM >= s.APB:
		return fmt.Errorf("job size of %q: am %v MB, want a finite number >= 0 and below the apb (%v)", s.Job, s.AM, s.APB)
	}
	return nil
}
