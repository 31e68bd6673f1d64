package policy

import (
	"fmt"
	"math"

	"github.com/allot-sched/allot/profile"
)

// Signal is one report for the allocator's policies, passed to
// allocator.Allocator.Observe. Each kind below is its own type; the
// allocator checks the framework or agent it names and what it carries,
// so an invalid report is refused whatever the policy.
type Signal interface{ signal() }

// AppDemand declares Framework's application: Demand.Executors executors
// of Demand.Cpus/Demand.Mem each, following Demand.Profile from their
// launch (the gang criteria: prophet, tetris-peak). The zero Demand
// withdraws the declaration.
type AppDemand struct {
	Framework string
	Demand    profile.AppDemand
}

// JobType names Framework's job type (the co-location bandit learns per
// type); "" makes it untyped.
type JobType struct {
	Framework, Type string
}

// Usage is Agent's measured usage over the interval that ends now.
type Usage struct {
	Agent string
	Rates NodeUsage
}

// CoProgress is the co-location's progress on Agent over the interval
// that ends now: the mean over its tasks of each task's progress rate over
// its type's solo rate. Whoever measures progress (the simulator's model;
// a master fed by frameworks) computes the number.
type CoProgress struct {
	Agent    string
	Progress float64
}

// StageProgress reports that Framework's executor on Agent is in its
// predicted profile's Stage, Done (in [0, 1]) of it through, at the
// allocator's clock. If the framework holds several executors on the
// agent, the oldest is meant.
type StageProgress struct {
	Framework, Agent string
	Stage            int
	Done             float64
}

func (AppDemand) signal()     {}
func (JobType) signal()       {}
func (Usage) signal()         {}
func (CoProgress) signal()    {}
func (StageProgress) signal() {}
func (JobSize) signal()       {}

// NodeUsage is one agent's measured usage over the last interval, as rates:
// what the master derives from two successive agent reports
// (api.RatesBetween) and the simulator from its model.
type NodeUsage struct {
	// CPU and IOWait are fractions of the node's CPU time, in [0, 1].
	CPU, IOWait float64
	// Throughputs in MB/s.
	DiskReadMBps, DiskWriteMBps float64
	NetRxMBps, NetTxMBps        float64
}

// Validate reports the first rate out of range.
func (u NodeUsage) Validate() error {
	for _, v := range []float64{u.CPU, u.IOWait, u.DiskReadMBps, u.DiskWriteMBps, u.NetRxMBps, u.NetTxMBps} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("usage %+v: every rate must be a finite number >= 0", u)
		}
	}
	if u.CPU > 1 || u.IOWait > 1 {
		return fmt.Errorf("usage %+v: cpu and iowait are fractions, at most 1", u)
	}
	return nil
}
