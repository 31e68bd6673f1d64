package psdsf

import (
	"fmt"
	"time"

	"github.com/allot-sched/allot/allocator"
	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
	"github.com/allot-sched/allot/sorter"
)

// Table1Row is one scheduler's line of the PS-DSF paper's Tables 1-4.
type Table1Row struct {
	Scheduler string      `json:"scheduler"`
	X         [][]float64 `json:"x"`      // x[n][i]: tasks of framework n+1 on server i+1 (mean over trials)
	Total     float64     `json:"total"`  // sum of x
	Stddev    [][]float64 `json:"stddev"` // sample standard deviation of x[n][i] over trials (0 for deterministic rows)
	Unused    [][]float64 `json:"unused"` // unused[i][r]: capacity of resource r+1 left on server i+1 (mean)
	// UnusedStddev is the paper's Table 4.
	UnusedStddev [][]float64 `json:"unused_stddev"`
	Trials       int         `json:"trials"`
}

// Table1Setup is the paper's illustrative example: two frameworks with
// per-task demands d1=(5,1), d2=(1,5) and two servers c1=(100,30),
// c2=(30,100), resources 1 and 2 being cpus and mem.
type Table1Setup struct {
	Demands    [2]resources.Vector
	Capacities [2]resources.Vector
}

func vec(cpus, mem float64) resources.Vector {
	var v resources.Vector
	v[resources.CPUs] = resources.Quantity(cpus * resources.Scale)
	v[resources.Mem] = resources.Quantity(mem * resources.Scale)
	return v
}

// PaperTable1Setup returns the example of section 2 of the paper.
func PaperTable1Setup() Table1Setup {
	return Table1Setup{
		Demands:    [2]resources.Vector{vec(5, 1), vec(1, 5)},
		Capacities: [2]resources.Vector{vec(100, 30), vec(30, 100)},
	}
}

// Table1Scheduler names a row and the allocator policy behind it.
type Table1Scheduler struct {
	Name      string
	Sorter    sorter.Criterion
	Selection sorter.AgentSelection
	Random    bool // averaged over trials
}

// Table1Schedulers are the rows, in the paper's order plus RRR-rPS-DSF.
var Table1Schedulers = []Table1Scheduler{
	{"DRF", sorter.DRF{}, sorter.RRR, true},
	{"TSF", sorter.TSF{}, sorter.RRR, true},
	{"RRR-PS-DSF", sorter.PSDSF{}, sorter.RRR, true},
	{"BF-DRF", sorter.DRF{}, sorter.BestFit, false},
	{"PS-DSF", sorter.PSDSF{}, sorter.Joint, false},
	{"rPS-DSF", sorter.RPSDSF{}, sorter.Joint, false},
	{"RRR-rPS-DSF", sorter.RPSDSF{}, sorter.RRR, true},
}

// Fill runs one progressive filling of setup under the policy and returns
// x[n][i]. Each framework wants unlimited tasks; one allocation cycle in
// characterized mode fills until no task fits.
func (s Table1Setup) Fill(crit sorter.Criterion, sel sorter.AgentSelection, seed uint64) ([2][2]int, error) {
	var x [2][2]int
	al, err := allocator.New(allocator.Config{
		Sorter: crit, AgentSelection: sel, Mode: allocator.Characterized,
		Seed: seed, Clock: &allocator.ManualClock{T: time.Unix(0, 0)},
	})
	if err != nil {
		return x, err
	}
	for i, c := range s.Capacities {
		if err := al.AddAgent(fmt.Sprintf("s%d", i+1), allocator.AgentInfo{Total: resources.Resources{Scalars: c}}); err != nil {
			return x, err
		}
	}
	for n, d := range s.Demands {
		id := fmt.Sprintf("f%d", n+1)
		if err := al.AddFramework(id, ""); err != nil {
			return x, err
		}
		if err := al.SetDemand(id, allocator.Demand{Task: resources.Resources{Scalars: d}, Tasks: -1}); err != nil {
			return x, err
		}
	}
	for _, o := range al.Allocate().Offers {
		var n, i int
		fmt.Sscanf(o.Framework, "f%d", &n)
		fmt.Sscanf(o.Agent, "s%d", &i)
		x[n-1][i-1] += o.Tasks
	}
	return x, nil
}

// Table1 computes every row: RRR rows over trials seeded seed, seed+1, ...
func (s Table1Setup) Table1(trials int, seed uint64) ([]Table1Row, error) {
	if trials < 1 {
		return nil, fmt.Errorf("trials must be at least 1, got %d", trials)
	}
	var rows []Table1Row
	for _, sc := range Table1Schedulers {
		n := 1
		if sc.Random {
			n = trials
		}
		var xs [][2][2]int
		for t := 0; t < n; t++ {
			x, err := s.Fill(sc.Sorter, sc.Selection, seed+uint64(t))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", sc.Name, err)
			}
			xs = append(xs, x)
		}
		rows = append(rows, s.summarise(sc.Name, xs))
	}
	return rows, nil
}

func (s Table1Setup) summarise(name string, xs [][2][2]int) Table1Row {
	row := Table1Row{Scheduler: name, Trials: len(xs)}
	var xv, uv [2][2][]float64
	for _, x := range xs {
		for n := 0; n < 2; n++ {
			for i := 0; i < 2; i++ {
				xv[n][i] = append(xv[n][i], float64(x[n][i]))
			}
		}
		for i := 0; i < 2; i++ {
			for r, k := range []resources.Kind{resources.CPUs, resources.Mem} {
				used := 0.0
				for n := 0; n < 2; n++ {
					used += float64(x[n][i]) * s.Demands[n][k].Units()
				}
				uv[i][r] = append(uv[i][r], s.Capacities[i][k].Units()-used)
			}
		}
	}
	grid := func(v [2][2][]float64, f func([]float64) float64) [][]float64 {
		return [][]float64{{f(v[0][0]), f(v[0][1])}, {f(v[1][0]), f(v[1][1])}}
	}
	row.X, row.Stddev = grid(xv, sim.Mean), grid(xv, sim.StdDev)
	row.Unused, row.UnusedStddev = grid(uv, sim.Mean), grid(uv, sim.StdDev)
	for _, r := range row.X {
		row.Total += r[0] + r[1]
	}
	return row
}
