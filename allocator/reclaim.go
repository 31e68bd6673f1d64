package allocator

import (
	"fmt"
	"math"
	"sort"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sorter"
)

// Starving is a framework that wants resources it cannot get: the
// pressure an operator sees and the reason inverse offers are sent.
type Starving struct {
	Framework, Role string
	// Share is its share by the criterion in force (see shareOf), and
	// FairShare the level every contending framework would have with the
	// cluster shared out by weight; Share is below it.
	Share, FairShare float64
	// Need is one task's worth it cannot place; zero when it declared no
	// demand (any allocatable resources would do).
	Need   resources.Vector
	Reason string
}

// Pressure lists the frameworks starving now, lowest share first (ties by
// registration order). It reads state and changes nothing, with or without
// Config.Reclaim.
//
// A framework starves when it is active and unsuppressed, wants more (a
// declared demand with tasks outstanding, or no declared demand at all,
// which in Mesos means "offer me anything"), is below its fair share, and
// no agent it has not filtered has room for it: one task's worth when it
// declared a demand, the min-allocatable floor when it did not. A cycle
// offers whatever fits, so after a cycle "nothing fits" is the same as
// "nothing offered and nothing to offer".
func (a *Allocator) Pressure() []Starving {
	level := a.fairLevel()
	var out []Starving
	for _, f := range a.fws {
		if f == nil || !a.starves(f, level) {
			continue
		}
		s := Starving{Framework: f.id, Role: f.role, Share: a.shareOf(&f.view), FairShare: level}
		need := "anything allocatable"
		if f.hasDemand {
			s.Need = f.task
			need = resources.Resources{Scalars: f.task}.String()
		}
		s.Reason = fmt.Sprintf("%s wants %s at share %.3f below fair %.3f, and no agent it has not filtered has room", f.id, need, s.Share, level)
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Share < out[j].Share })
	return out
}

// shareOf is a framework's share by the criterion in force when its keys
// are weighted shares (DRF, TSF, Capacity: share / weight), else its
// weighted dominant share as DRF's: FIFO's, Tetris's and the per-agent
// criteria's scores are not shares of anything.
func (a *Allocator) shareOf(v *sorter.Framework) float64 {
	switch c := a.crit.(type) {
	case sorter.DRF, sorter.TSF, sorter.Capacity:
		return c.(sorter.Ordering).Key(v, &a.cluster)
	}
	return sorter.DRF{}.Key(v, &a.cluster)
}

// contends says whether f takes part in the sharing: active, and holding
// something or (unsuppressed) wanting more. A framework that suppressed
// offers because it holds all it asked for still shares the cluster: left
// out, the fair level was computed as if it held nothing, so a framework
// holding the whole cluster while another waited was never above its fair
// share and never asked back, the very case inverse offers are for (issue
// 11: an elastic application that got every executor it asked for
// suppresses, and the one that arrives after it waited for it to end).
func (a *Allocator) contends(f *framework) bool {
	return f.active && (!isZero(f.alloc.Scalars) || a.wantsMore(f))
}

func (a *Allocator) wantsMore(f *framework) bool {
	return f.active && !f.suppressed && (!f.hasDemand || f.want != 0)
}

// fairLevel is 1 / (sum of the contending frameworks' weights): a
// framework whose weighted share (share / weight) is at this level holds
// exactly its weight's part of the cluster. 0 when nobody contends.
func (a *Allocator) fairLevel() float64 {
	sum := 0.0
	for _, f := range a.fws {
		if f != nil && a.contends(f) {
			sum += a.weight(f.role)
		}
	}
	if sum == 0 {
		return 0
	}
	return 1 / sum
}

func (a *Allocator) starves(f *framework, level float64) bool {
	if !a.wantsMore(f) || a.shareOf(&f.view) >= level {
		return false
	}
	for _, ag := range a.agents {
		if ag != nil && a.roomFor(f, ag) {
			return false
		}
	}
	return true
}

// roomFor says whether f could be offered something on ag now.
func (a *Allocator) roomFor(f *framework, ag *agent) bool {
	if f.hasDemand {
		return ag.avail.Scalars.Contains(f.task) && !a.blocked(f, ag, resources.Resources{Scalars: f.task})
	}
	return a.allocatable(ag.avail) && !a.blocked(f, ag, ag.avail.Reservable())
}

// reclaim decides this cycle's inverse offers (Config.Reclaim): for each
// starving framework, lowest share first, one inverse offer to a framework
// above the fair level, highest share first, for the least it can give on
// one agent that makes room there (see giveBack). A
// holder is asked only if, after giving, it still holds at least the
// share the starving framework reaches with the room (so a transfer never
// turns the richer into the poorer, and two frameworks cannot ask each
// other back and forth), and at most once per agent per cycle; what it is asked for in
// this cycle counts against it for the next starving framework. Inverse
// offers change no books: the resources stay allocated until recovered.
func (a *Allocator) reclaim() []InverseOffer {
	starving := a.Pressure()
	if len(starving) == 0 {
		return nil
	}
	level := starving[0].FairShare
	asked := map[[2]int32]bool{}
	given := map[int32]resources.Vector{}
	after := map[int32]float64{} // shareAfter(h, given[h]), kept as given changes
	var out []InverseOffer
	for _, s := range starving {
		f := a.fws[a.fwByID[s.Framework]]
		if io, ok := a.reclaimFor(f, s, level, asked, given, after); ok {
			out = append(out, io)
		}
	}
	return out
}

// holders are the active frameworks other than f above the fair level
// after what they were asked for this cycle, highest share first. after
// caches each framework's share after what it was asked for (reclaimFor
// drops the entry of the holder it asks), so a cycle with many starving
// frameworks computes each share once rather than once per starving one.
func (a *Allocator) holders(f *framework, level float64, given map[int32]resources.Vector, after map[int32]float64) []*framework {
	var hs []*framework
	shares := map[int32]float64{}
	for _, h := range a.fws {
		if h == nil || h == f || !h.active {
			continue
		}
		s, ok := after[h.idx]
		if !ok {
			s = a.shareAfter(h, given[h.idx])
			after[h.idx] = s
		}
		if s > level {
			hs = append(hs, h)
			shares[h.idx] = s
		}
	}
	sort.SliceStable(hs, func(i, j int) bool { return shares[hs[i].idx] > shares[hs[j].idx] })
	return hs
}

// shareWith is f's share once it holds r more (the room it is after:
// one task's worth, or the whole give-back when it declared no demand).
func (a *Allocator) shareWith(f *framework, r resources.Vector) float64 {
	v := f.view
	if f.hasDemand {
		r = f.task
		v.Tasks++
	}
	v.Allocated = v.Allocated.Add(r)
	return a.shareOf(&v)
}

// shareAfter is h's share if it gave back less.
func (a *Allocator) shareAfter(h *framework, less resources.Vector) float64 {
	v := h.view
	v.Allocated = v.Allocated.Sub(less)
	if h.hasDemand && !isZero(less) {
		// task-counting criteria (TSF) see the tasks' worth it gives up
		if ratio, ok := less.MaxRatio(h.task, false); ok {
			v.Tasks = max(0, v.Tasks-int64(math.Ceil(ratio-1e-9)))
		}
	}
	return a.shareOf(&v)
}

// reclaimFor picks the holder and agent for one starving framework.
func (a *Allocator) reclaimFor(f *framework, s Starving, level float64, asked map[[2]int32]bool, given map[int32]resources.Vector, after map[int32]float64) (InverseOffer, bool) {
	for _, h := range a.holders(f, level, given, after) {
		var best *agent
		var bestR resources.Vector
		bestSize := 0.0
		for _, ag := range a.agents {
			if ag == nil || asked[[2]int32{h.idx, ag.idx}] {
				continue
			}
			r, ok := a.giveBack(f, h, ag, level, given[h.idx])
			if !ok || a.shareAfter(h, given[h.idx].Add(r)) < a.shareWith(f, r) {
				continue
			}
			if size := a.sizeOf(r); best == nil || size < bestSize {
				best, bestR, bestSize = ag, r, size
			}
		}
		if best == nil {
			continue
		}
		asked[[2]int32{h.idx, best.idx}] = true
		given[h.idx] = given[h.idx].Add(bestR)
		delete(after, h.idx)
		res := resources.Resources{Scalars: bestR}
		return InverseOffer{Framework: h.id, Agent: best.id, Resources: res,
			Reason: fmt.Sprintf("%s waits at share %.3f (fair %.3f) while %s holds %.3f: give back %s on %s",
				f.id, s.Share, level, h.id, a.shareOf(&h.view), res, best.id)}, true
	}
	return InverseOffer{}, false
}

// sizeOf measures a give-back: the sum over kinds of its share of the
// cluster, so that of two give-backs with the same dominant share the one
// that takes less of the other kinds is smaller.
func (a *Allocator) sizeOf(r resources.Vector) float64 {
	size := 0.0
	for k := resources.Kind(0); k < resources.NumKinds; k++ {
		if !k.Advisory() && a.cluster.Total[k] > 0 {
			size += float64(r[k]) / float64(a.cluster.Total[k])
		}
	}
	return size
}

// giveBack is what h would give back on ag to make room there for f, and
// whether that works at all (h holds enough, f has not filtered ag). For a
// framework with a declared demand that is one task's worth less what ag
// has free. One without a demand wants "anything", and handing it a
// holder's whole agent would only swap who starves: the holder gives back
// the part of its holding on ag by which it exceeds the fair level
// (holding x (share - fair) / share), rounded down.
func (a *Allocator) giveBack(f, h *framework, ag *agent, level float64, less resources.Vector) (resources.Vector, bool) {
	var held resources.Vector
	for i := range ag.holds {
		if ag.holds[i].fw == h.idx {
			held = ag.holds[i].scalars
		}
	}
	if isZero(held) {
		return held, false
	}
	if !f.hasDemand {
		share := a.shareAfter(h, less)
		if share <= level {
			return held, false
		}
		var r resources.Vector
		for k := range held {
			r[k] = resources.Quantity(float64(held[k]) * (share - level) / share)
		}
		return r, !isZero(r) && a.allocatable(resources.Resources{Scalars: r.Add(ag.avail.Scalars)}) &&
			!a.blocked(f, ag, resources.Resources{Scalars: r.Add(ag.avail.Scalars)})
	}
	short := f.task.Sub(ag.avail.Scalars)
	if isZero(short) || !held.Contains(short) || a.blocked(f, ag, resources.Resources{Scalars: f.task}) {
		return short, false
	}
	return short, true
}

func isZero(v resources.Vector) bool { return v == resources.Vector{} }
