package dispatch

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/allot-sched/allot/api"
)

// Backoff is Prophet's task backoff (Section III-B) as a Dispatcher
// wrapper: when a host's disk or network delivers far less than its
// capacity while the device stays busy, the executors on that host whose
// predicted profiles say they are its heaviest users run fewer tasks for a
// few rounds. The rule and its thresholds are the simulator's
// (sim/backoff.go), so the two can be compared:
//
//   - Contested: Busy and Delivered < Trigger x Capacity (0.9). For a
//     disk, Busy is the usage monitor's busy fraction >= BusyMin (0.9,
//     DiskDevice); a NIC has no busy counter, so NetDevice calls it busy
//     when the predicted demand of its users exceeds its capacity.
//   - Who: the users in descending predicted demand until what is left,
//     the flagged ones at Factor of theirs, fits under the capacity.
//   - What: a flagged executor is offered tasks only while it runs fewer
//     than Factor (0.25) of its cores, at least one: fewer tasks, never none.
//   - How long: Hold rounds (20) after the last round that flagged it.
//
// The thresholds were chosen in the simulator on held-out seeds (the
// doc comment of sim/backoff.go says how); the first guess (0.8, half,
// 3 rounds) lifted too soon and too lightly.
//
// Round is fed once per scheduling round by whoever reads the agents'
// usage (api.RatesBetween turns two reports into the rates); Choose is
// the Dispatcher. Both are safe for concurrent use.
type Backoff struct {
	Inner  Dispatcher
	Params BackoffParams

	mu   sync.Mutex
	held map[string]int // executor -> rounds left
}

var _ Dispatcher = (*Backoff)(nil)

// BackoffParams are the thresholds; DefaultBackoff documents them.
type BackoffParams struct {
	Trigger float64 // delivered/capacity below which a busy device is contested, (0, 1]
	Factor  float64 // share of its cores a flagged executor keeps busy, (0, 1)
	Hold    int     // rounds a flag lasts, >= 1
	BusyMin float64 // disk busy fraction that counts as busy, (0, 1]
}

// DefaultBackoff are the simulator's thresholds plus the disk's BusyMin.
var DefaultBackoff = BackoffParams{Trigger: 0.9, Factor: 0.25, Hold: 20, BusyMin: 0.9}

// Validate reports a threshold out of range.
func (p BackoffParams) Validate() error {
	switch {
	case !(p.Trigger > 0 && p.Trigger <= 1):
		return fmt.Errorf("backoff: trigger %v not in (0, 1]", p.Trigger)
	case !(p.Factor > 0 && p.Factor < 1):
		return fmt.Errorf("backoff: factor %v not in (0, 1)", p.Factor)
	case p.Hold < 1:
		return fmt.Errorf("backoff: hold %d < 1", p.Hold)
	case !(p.BusyMin > 0 && p.BusyMin <= 1):
		return fmt.Errorf("backoff: busy_min %v not in (0, 1]", p.BusyMin)
	}
	return nil
}

// User is an executor on a host with its predicted demand (MB/s) on a
// device in its current stage.
type User struct {
	Exec      string
	Predicted float64
}

// Device is one host's disk or NIC over the last round.
type Device struct {
	Capacity, Delivered float64 // MB/s
	Busy                bool
	Users               []User
}

// DiskDevice reads a host's disk from its usage rates.
func (p BackoffParams) DiskDevice(capacity float64, r api.UsageRates, users []User) Device {
	return Device{Capacity: capacity, Delivered: r.DiskReadMBps + r.DiskWriteMBps, Busy: r.DiskBusy >= p.BusyMin, Users: users}
}

// NetDevice reads a host's NIC (full duplex: the busier direction).
func NetDevice(capacity float64, r api.UsageRates, users []User) Device {
	var want float64
	for _, u := range users {
		want += u.Predicted
	}
	return Device{Capacity: capacity, Delivered: max(r.NetRxMBps, r.NetTxMBps), Busy: want > capacity, Users: users}
}

// Round counts every flag down by one round, then flags the heaviest
// predicted users of each contested device.
func (b *Backoff) Round(devs []Device) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for x, n := range b.held {
		if n <= 1 {
			delete(b.held, x)
		} else {
			b.held[x] = n - 1
		}
	}
	for _, d := range devs {
		if d.Capacity > 0 && d.Busy && d.Delivered < b.Params.Trigger*d.Capacity {
			b.flag(d)
		}
	}
}

func (b *Backoff) flag(d Device) {
	pred := make([]float64, len(d.Users))
	held := make([]bool, len(d.Users))
	for i, u := range d.Users {
		pred[i], held[i] = u.Predicted, b.held[u.Exec] > 0
	}
	if b.held == nil {
		b.held = map[string]int{}
	}
	for _, i := range Overusers(pred, held, d.Capacity, b.Params.Factor) {
		b.held[d.Users[i].Exec] = b.Params.Hold
	}
}

// Overusers is the rule that picks who backs off on a contested device of
// capacity c, shared by the runtime (Backoff) and the simulator
// (sim/backoff.go) so that the two cannot drift apart. pred[i] is user
// i's predicted demand on the device in its current stage; held[i] says it
// is backed off already, so it demands factor of pred[i]. Users are taken
// in descending predicted demand (ties in the order given) while what they
// are predicted to demand in all exceeds c: each taken user is flagged (a
// held one is renewed; one flagged afresh lowers the total by 1 - factor
// of its prediction). Users predicted to demand nothing are never taken.
// It returns the indices flagged, in the order taken.
func Overusers(pred []float64, held []bool, c, factor float64) []int {
	order := make([]int, 0, len(pred))
	var total float64
	for i, p := range pred {
		if p <= 0 {
			continue
		}
		order = append(order, i)
		if held[i] {
			total += p * factor
		} else {
			total += p
		}
	}
	sort.SliceStable(order, func(a, z int) bool { return pred[order[a]] > pred[order[z]] })
	var flagged []int
	for _, i := range order {
		if total <= c {
			break
		}
		if !held[i] {
			total -= pred[i] * (1 - factor)
		}
		flagged = append(flagged, i)
	}
	return flagged
}

// Flagged reports whether executor x is backed off.
func (b *Backoff) Flagged(x string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held[x] > 0
}

// Choose lets Inner choose among the slots with every flagged executor's
// cores cut to Factor of them (at least one).
func (b *Backoff) Choose(now time.Time, t Task, slots []Slot) int {
	b.mu.Lock()
	cut := slots
	for i := range slots {
		if b.held[slots[i].Exec] > 0 {
			if len(cut) > 0 && &cut[0] == &slots[0] {
				cut = append([]Slot(nil), slots...)
			}
			cut[i].Cores = max(1, int(float64(slots[i].Cores)*b.Params.Factor))
		}
	}
	b.mu.Unlock()
	return b.Inner.Choose(now, t, cut)
}
