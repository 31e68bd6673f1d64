package framework

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/framework/eventlog"
)

// pool is the executor pool: the registered executors and the number the
// driver asks its backend for. Every field is guarded by Context.mu.
type pool struct {
	execs    map[string]*execState
	everExec bool // an executor has registered at least once
	target   int  // executors asked for
	pending  int  // tasks waiting for a slot, as the job loop last counted
	backlog  elastic.Backlog
	// lostSamples keeps the samples of removed executors, for the usage of
	// the stages they ran.
	lostSamples map[string][]Sample
	// handoff is set while an iSpark scale-down (moves, then releases) is
	// under way; no new decision is taken meanwhile (handoff.go).
	handoff bool
	// lastEpoch is when utilisation was last computed (utilisation.go),
	// lastISpark when iSpark's utilisation rules last ran (decideLocked).
	lastEpoch, lastISpark time.Time
}

func newPool(target int) pool {
	return pool{execs: map[string]*execState{}, lostSamples: map[string][]Sample{}, target: target}
}

// execState is the driver's view of a registered executor.
type execState struct {
	id, url, host string
	cores, pid    int
	running       int
	idleSince     time.Time
	registered    time.Time
	samples       []Sample
	cached        int      // blocks it reported holding in its last heartbeat
	util          execUtil // iSpark's monitoring (utilisation.go)
}

// Executors lists the registered executors' ids and pids (for tests and
// tools).
func (c *Context) Executors() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for id, e := range c.pool.execs {
		out[id] = e.pid
	}
	return out
}

// registration says whether executor id is registered now, and whether any
// executor ever was (backends use it to tell a failed start from a loss).
func (c *Context) registration(id string) (registered, ever bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pool.execs[id] != nil, c.pool.everExec
}

func (c *Context) handleRegister(w http.ResponseWriter, r *http.Request) {
	var reg registration
	if err := json.NewDecoder(r.Body).Decode(&reg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !c.backend.known(reg.ID) {
		http.Error(w, "unknown or released executor "+reg.ID, http.StatusGone)
		return
	}
	now := c.clock.Now()
	c.mu.Lock()
	c.pool.execs[reg.ID] = &execState{id: reg.ID, url: reg.URL, host: reg.Host, cores: reg.Cores, pid: reg.PID, registered: now, idleSince: now}
	c.pool.everExec = true
	c.mu.Unlock()
	c.emit(&eventlog.ExecutorAdded{Time: unixSeconds(now), Executor: reg.ID, Host: reg.Host, URL: reg.URL, Cores: reg.Cores, PID: reg.PID})
	c.cfg.Logf("executor %s registered at %s (%d cores, pid %d)", reg.ID, reg.URL, reg.Cores, reg.PID)
	c.notify()
}

func (c *Context) handleHeartbeat(w http.ResponseWriter, r *http.Request) {
	var hb heartbeat
	if err := json.NewDecoder(r.Body).Decode(&hb); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	e := c.pool.execs[hb.ID]
	if e == nil {
		c.mu.Unlock()
		http.Error(w, "executor "+hb.ID+" was released", http.StatusGone)
		return
	}
	e.samples = append(e.samples, hb.Sample)
	e.cached = len(hb.Cached)
	e.util.noteSizes(hb.Cached, hb.Sizes)
	c.flushUsageLocked(false)
	c.mu.Unlock()
	s := hb.Sample
	c.emit(&eventlog.ExecutorSample{Executor: hb.ID, Time: s.Time, CPU: s.CPU, MemBytes: s.MemBytes, DiskBW: s.DiskBW, FileBW: s.FileBW,
		NetBW: s.NetBW, Running: s.Running, Stages: s.Stages, BlockMem: s.BlockMem, BlockSpill: s.BlockSpill, CachedBlocks: len(hb.Cached)})
}

// executorLostLocked forgets an executor and everything it held; the
// backend replaces it if the target still wants it. Caller holds c.mu.
func (c *Context) executorLostLocked(id, reason string) {
	e := c.pool.execs[id]
	if e == nil {
		return
	}
	delete(c.pool.execs, id)
	c.pool.lostSamples[id] = e.samples
	lostCached := c.dag.forgetExecutor(id)
	c.cfg.Logf("executor %s lost: %s (%d cached partitions to recompute from lineage)", id, reason, lostCached)
	c.emit(&eventlog.ExecutorRemoved{Time: c.now(), Executor: id, Reason: reason, LostCachedPartitions: lostCached})
	c.notify()
}

// executorLost is called by backends when the cluster says an executor
// ended, and by the driver when one stops answering.
func (c *Context) executorLost(id, reason string) {
	c.mu.Lock()
	c.executorLostLocked(id, reason)
	c.mu.Unlock()
}
