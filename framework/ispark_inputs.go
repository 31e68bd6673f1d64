package framework

import (
	"time"

	"github.com/allot-sched/allot/framework/elastic"
)

// What iSpark decides on, gathered from the driver's state.

// iSparkInputsLocked fills x's utilisation and cache for the scaling
// policy: utilisation over the last monitoring epoch, U_max, the cached
// partitions the driver reads from e with their sizes and whether a stage
// of the running job still reads them (VIP). Caller holds c.mu.
//
// Done (evict first) is never set: a dataset the program cached is one it
// means to read again, and the driver cannot know which later jobs will
// (it sees one job at a time, and the runtime has no unpersist). Treating
// every cached partition as live is the choice that never loses one a
// later iteration reads.
func (c *Context) iSparkInputsLocked(e *execState, x *elastic.Executor) {
	x.MemMB = c.cfg.MemMB
	x.CPUUtil, x.MemUtil = c.snapshotUtil(e)
	x.UMax = e.util.umax
	x.CacheBytes = int64(c.cfg.BlockMemMB) << 20
	vip := c.jobReadsLocked()
	for node, parts := range c.dag.cacheLocs {
		for part, l := range parts {
			if l.Exec != e.id {
				continue
			}
			x.Cache = append(x.Cache, elastic.CachedPartition{Partition: elastic.Partition{Node: node, Part: part},
				Bytes: e.util.sizes[cacheBlock(node, part)], VIP: vip[node]})
		}
	}
}

// jobReadsLocked is the set of cached dataset nodes that a stage of the
// running job, not yet complete, reads. Caller holds c.mu.
func (c *Context) jobReadsLocked() map[int]bool {
	out := map[int]bool{}
	for _, s := range c.jobStages {
		if s.submitted && !s.end.IsZero() {
			continue
		}
		for _, n := range s.nodes {
			if n.Cached {
				out[n.ID] = true
			}
		}
	}
	return out
}

// othersWaiting is the cluster's "others are waiting" signal: the
// OthersWaiting hook if set, else the backend's (inverse offers), else no.
func (c *Context) othersWaiting() bool {
	if c.cfg.OthersWaiting != nil {
		return c.cfg.OthersWaiting()
	}
	if w, ok := c.backend.(waitSignal); ok {
		return w.othersWaiting()
	}
	return false
}

// waitSignal is a backend that hears whether others wait (the Mesos
// backend, from inverse offers).
type waitSignal interface {
	othersWaiting() bool
	// answerInverse declines the inverse offers no giver answers: those on
	// agents where no executor of busy is.
	answerInverse(busy []string)
}

// answerInverseLocked lets the backend decline inverse offers this
// decision gives nothing for. Caller holds c.mu (the backend is called
// from a goroutine).
func (c *Context) answerInverseLocked(d elastic.Decision) {
	w, ok := c.backend.(waitSignal)
	if !ok {
		return
	}
	var busy []string
	for _, r := range d.Releases {
		busy = append(busy, r.Executor)
	}
	go w.answerInverse(busy)
}

// noteCachedLocked counts recomputations: a task that stored partition
// part of a cached node computed it, and if that partition had been lost
// with its holder, that was a recomputation. (Two tasks computing the same
// partition at once, before either recorded it, are not: nothing was
// lost.) Caller holds c.mu.
func (c *Context) noteCachedLocked(nodes []int, part int) {
	for _, id := range nodes {
		if c.dag.lost[id][part] {
			c.dag.recomputed++
			delete(c.dag.lost[id], part)
		}
	}
}

// markLost records that a cached partition was lost with its holder.
func (d *dag) markLost(node, part int) {
	if d.lost == nil {
		d.lost = map[int]map[int]bool{}
	}
	if d.lost[node] == nil {
		d.lost[node] = map[int]bool{}
	}
	d.lost[node][part] = true
}

// Recomputations is how many cached partitions were computed again after
// they were lost with their holder (logged in application_end).
func (c *Context) Recomputations() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dag.recomputed
}

// decideLocked asks the scaling policy. iSpark's utilisation rules (give
// back, reprovision) read figures that change once per monitoring epoch,
// so they run once per epoch, as the paper's provisioning interval:
// asked every scaling tick, the reprovisioning rule added an executor
// every 250 ms while one epoch's figure stayed above its threshold.
// Between epochs only the backlog/idle rule underneath runs, under the
// ceiling a shrink set while others wait. Caller holds c.mu.
func (c *Context) decideLocked(now time.Time, snap elastic.Pool) elastic.Decision {
	isp, ok := c.scaling.(elastic.ISpark)
	if !ok || c.cfg.MonitorEpoch <= 0 || (!c.pool.lastEpoch.IsZero() && c.pool.lastEpoch.After(c.pool.lastISpark)) {
		c.pool.lastISpark = now
		return c.scaling.Decide(now, snap)
	}
	d := isp.Scale.Decide(now, snap)
	ceiling := snap.Backlog.Ceiling
	if !snap.OthersWaiting {
		ceiling = 0
	}
	if ceiling > 0 && d.Additions > 0 {
		cut := d.Additions - min(d.Additions, max(0, ceiling-snap.Target))
		d.Additions -= cut
		d.Target -= cut
	}
	d.Backlog.Ceiling = ceiling
	return d
}
