package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// Config configures an application's driver.
type Config struct {
	App string
	// Master is the Mesos master, host:port[,host:port...]. Ignored with Local.
	Master string
	// Local runs the executors inside this process (still over HTTP).
	Local bool
	// Executors is how many executors to ask for (the initial number with
	// Dynamic); Cores and MemMB size each.
	Executors, Cores, MemMB int
	// BlockMemMB caps each block manager's memory (default MemMB/2).
	BlockMemMB int
	// Dynamic allocation: scale up on a task backlog lasting BacklogTimeout,
	// release executors idle for IdleTimeout that hold no cached data, within
	// [MinExecutors, MaxExecutors].
	Dynamic                      bool
	MinExecutors, MaxExecutors   int
	IdleTimeout, BacklogTimeout  time.Duration
	ExecutorBinary, ExecutorURI  string // default os.Executable(); a URI the agent fetches instead
	EventLogDir                  string // default $TMPDIR/allot-events
	Listen                       string // the driver's HTTP address for executors (default 127.0.0.1:0)
	MaxTaskFailures              int    // default 4
	LocalityWait                 time.Duration
	Role                         string
	FailoverTimeout, RefuseAfter time.Duration
	// ExecutorStartFailures aborts the application after this many executor
	// launch failures while no executor has ever registered (default 3).
	ExecutorStartFailures int
	Logf                  func(format string, args ...any)
}

func (c *Config) setDefaults() {
	if c.App == "" {
		c.App = "app"
	}
	if c.Executors <= 0 {
		c.Executors = 2
	}
	if c.Cores <= 0 {
		c.Cores = 1
	}
	if c.MemMB <= 0 {
		c.MemMB = 512
	}
	if c.BlockMemMB <= 0 {
		c.BlockMemMB = c.MemMB / 2
	}
	if c.MinExecutors <= 0 {
		c.MinExecutors = 1
	}
	if c.MaxExecutors < c.Executors {
		c.MaxExecutors = c.Executors
		if c.Dynamic {
			c.MaxExecutors = 2 * c.Executors
		}
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 10 * time.Second
	}
	if c.BacklogTimeout == 0 {
		c.BacklogTimeout = time.Second
	}
	if c.MaxTaskFailures <= 0 {
		c.MaxTaskFailures = 4
	}
	if c.LocalityWait == 0 {
		c.LocalityWait = 500 * time.Millisecond
	}
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	if c.ExecutorStartFailures <= 0 {
		c.ExecutorStartFailures = 3
	}
	if c.EventLogDir == "" {
		c.EventLogDir = os.TempDir() + "/allot-events"
	}
	if c.Logf == nil {
		l := log.New(os.Stderr, "driver: ", log.LstdFlags|log.Lmicroseconds)
		c.Logf = l.Printf
	}
}

// backend gets executors from somewhere: in-process, or Mesos offers.
type backend interface {
	setTarget(n int)
	release(id string) // stop one executor (it is already forgotten by the driver)
	known(id string) bool
	stop()
}

// execState is the driver's view of a registered executor.
type execState struct {
	id, url, host string
	cores, pid    int
	running       int
	idleSince     time.Time
	registered    time.Time
	samples       []Sample
	cached        int
}

// Context is a driver: it owns the lineage, the executors and the event log.
type Context struct {
	cfg Config

	mu          sync.Mutex
	nodes       map[int]*node
	shuffles    map[int]*shuffleDep
	nextID      int
	nextShuffle int
	nextStage   int
	nextTask    int64
	inputBytes  int64

	execs     map[string]*execState
	everExec  bool
	outputs   map[int][]loc       // shuffle id -> map partition -> where its output is
	cacheLocs map[int]map[int]loc // node id -> partition -> holder
	shStages  map[int]*stage      // shuffle id -> its map stage
	target    int
	pending   int // tasks waiting for a slot (for dynamic allocation)
	backlogAt time.Time
	addStep   int
	fatal     error
	usage     []*usageWindow // stage windows waiting for their samples
	// lostSamples keeps the samples of removed executors, for the usage of
	// the stages they ran.
	lostSamples map[string][]Sample

	wake     chan struct{}
	backend  backend
	targetMu sync.Mutex // serializes pushTarget
	elog     *eventLog
	srv      *http.Server
	url      string
	http     *http.Client
	jobMu    sync.Mutex
	started  time.Time
	closed   bool
	stopBg   chan struct{}
}

// NewContext starts a driver: its HTTP server for executors, the event log
// and the backend, which starts asking for executors at once.
func NewContext(cfg Config) (*Context, error) {
	cfg.setDefaults()
	if !cfg.Local && cfg.Master == "" {
		return nil, fmt.Errorf("no master: give --master host:port (allot dev listens on 127.0.0.1:5050) or --local")
	}
	c := &Context{cfg: cfg, nodes: map[int]*node{}, shuffles: map[int]*shuffleDep{}, execs: map[string]*execState{},
		outputs: map[int][]loc{}, cacheLocs: map[int]map[int]loc{}, shStages: map[int]*stage{}, lostSamples: map[string][]Sample{}, wake: make(chan struct{}, 1),
		started: time.Now(), stopBg: make(chan struct{}), addStep: 1, target: cfg.Executors,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 1024}}}
	var err error
	if c.elog, err = openEventLog(cfg.EventLogDir, cfg.App); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("driver listen on %s: %w", cfg.Listen, err)
	}
	c.url = "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /register", c.handleRegister)
	mux.HandleFunc("POST /heartbeat", c.handleHeartbeat)
	c.srv = &http.Server{Handler: mux}
	go c.srv.Serve(ln)
	if cfg.Local {
		c.backend = newLocalBackend(c)
	} else {
		if c.backend, err = newMesosBackend(c); err != nil {
			c.srv.Close()
			return nil, err
		}
	}
	c.elog.emit(map[string]any{"event": "application_start", "app": cfg.App, "time": now(), "event_log": c.elog.path,
		"settings": map[string]any{"executors": cfg.Executors, "cores": cfg.Cores, "mem_mb": cfg.MemMB, "block_mem_mb": cfg.BlockMemMB,
			"dynamic": cfg.Dynamic, "min_executors": cfg.MinExecutors, "max_executors": cfg.MaxExecutors, "local": cfg.Local, "master": cfg.Master}})
	c.backend.setTarget(c.target)
	go c.background()
	return c, nil
}

// EventLog is the path of this run's event log.
func (c *Context) EventLog() string { return c.elog.path }

// Executors lists the registered executors' ids and pids (for tests and
// tools).
func (c *Context) Executors() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for id, e := range c.execs {
		out[id] = e.pid
	}
	return out
}

// Close releases every executor, writes the end of the event log and stops
// the driver. err, if any, is the application's failure, logged as such.
func (c *Context) Close(appErr error) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	close(c.stopBg)
	c.flushUsage(true)
	c.mu.Unlock()
	c.backend.stop()
	ev := map[string]any{"event": "application_end", "time": now(), "duration_s": time.Since(c.started).Seconds(), "success": appErr == nil, "input_bytes": c.inputBytes}
	if appErr != nil {
		ev["error"] = appErr.Error()
	}
	c.elog.emit(ev)
	c.srv.Close()
	return c.elog.close()
}

func (c *Context) notify() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// fail aborts the running and future jobs (executors cannot start, say).
func (c *Context) fail(err error) {
	c.mu.Lock()
	if c.fatal == nil {
		c.fatal = err
	}
	c.mu.Unlock()
	c.notify()
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
	c.mu.Lock()
	c.execs[reg.ID] = &execState{id: reg.ID, url: reg.URL, host: reg.Host, cores: reg.Cores, pid: reg.PID, registered: time.Now(), idleSince: time.Now()}
	c.everExec = true
	c.mu.Unlock()
	c.elog.emit(map[string]any{"event": "executor_added", "time": now(), "executor": reg.ID, "host": reg.Host, "url": reg.URL, "cores": reg.Cores, "pid": reg.PID})
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
	e := c.execs[hb.ID]
	if e == nil {
		c.mu.Unlock()
		http.Error(w, "executor "+hb.ID+" was released", http.StatusGone)
		return
	}
	e.samples = append(e.samples, hb.Sample)
	e.cached = len(hb.Cached)
	c.flushUsage(false)
	c.mu.Unlock()
	s := hb.Sample
	c.elog.emit(map[string]any{"event": "executor_sample", "executor": hb.ID, "time": s.Time, "cpu": s.CPU, "mem_bytes": s.MemBytes,
		"disk_bw": s.DiskBW, "file_bw": s.FileBW, "net_bw": s.NetBW, "running": s.Running, "stages": s.Stages,
		"block_mem": s.BlockMem, "block_spill": s.BlockSpill, "cached_blocks": len(hb.Cached)})
}

// executorLost forgets an executor and everything it held; the backend
// replaces it if the target still wants it. Caller holds c.mu.
func (c *Context) executorLostLocked(id, reason string) {
	e := c.execs[id]
	if e == nil {
		return
	}
	delete(c.execs, id)
	c.lostSamples[id] = e.samples
	for sid, locs := range c.outputs {
		for m, l := range locs {
			if l.Exec == id {
				c.outputs[sid][m] = loc{}
			}
		}
	}
	lostCached := 0
	for _, parts := range c.cacheLocs {
		for p, l := range parts {
			if l.Exec == id {
				delete(parts, p)
				lostCached++
			}
		}
	}
	c.cfg.Logf("executor %s lost: %s (%d cached partitions to recompute from lineage)", id, reason, lostCached)
	c.elog.emit(map[string]any{"event": "executor_removed", "time": now(), "executor": id, "reason": reason, "lost_cached_partitions": lostCached})
	c.notify()
}

// ExecutorLost is called by backends when the cluster says an executor
// ended.
func (c *Context) executorLost(id, reason string) {
	c.mu.Lock()
	c.executorLostLocked(id, reason)
	c.mu.Unlock()
}

// background runs dynamic allocation.
func (c *Context) background() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-c.stopBg:
			return
		case <-t.C:
		}
		if !c.cfg.Dynamic {
			continue
		}
		c.mu.Lock()
		now := time.Now()
		free := 0
		for _, e := range c.execs {
			free += e.cores - e.running
		}
		if c.pending > 0 && free == 0 {
			if c.backlogAt.IsZero() {
				c.backlogAt = now
			} else if now.Sub(c.backlogAt) >= c.cfg.BacklogTimeout && c.target < c.cfg.MaxExecutors {
				c.target = min(c.cfg.MaxExecutors, c.target+c.addStep)
				c.cfg.Logf("backlog of %d tasks for %v: asking for %d executors", c.pending, now.Sub(c.backlogAt).Round(time.Millisecond), c.target)
				c.elog.emit(map[string]any{"event": "executors_requested", "time": nowOf(now), "target": c.target, "backlog": c.pending})
				c.addStep *= 2
				c.backlogAt = now
				go c.pushTarget()
			}
		} else {
			c.backlogAt, c.addStep = time.Time{}, 1
		}
		for id, e := range c.execs {
			if e.running == 0 && e.cached == 0 && !c.holdsCache(id) && now.Sub(e.idleSince) >= c.cfg.IdleTimeout && len(c.execs) > c.cfg.MinExecutors && c.pending == 0 {
				c.target = max(c.cfg.MinExecutors, c.target-1)
				c.executorLostLocked(id, fmt.Sprintf("idle for %v with no cached data (dynamic allocation)", c.cfg.IdleTimeout))
				go func(id string) { c.backend.release(id); c.pushTarget() }(id)
			}
		}
		c.mu.Unlock()
	}
}

// pushTarget tells the backend the current target. Pushes are serialized
// and each reads c.target when it runs, so the last one carries the latest
// value: passing the value captured when the goroutine started let an
// older, larger target (releasing two idle executors one after the other)
// overwrite a newer one, and the backend launched a replacement for an
// executor it had just released.
func (c *Context) pushTarget() {
	c.targetMu.Lock()
	defer c.targetMu.Unlock()
	c.mu.Lock()
	n := c.target
	c.mu.Unlock()
	c.backend.setTarget(n)
}

func (c *Context) holdsCache(id string) bool {
	for _, parts := range c.cacheLocs {
		for _, l := range parts {
			if l.Exec == id {
				return true
			}
		}
	}
	return false
}

// stage is a set of tasks computing one node's partitions: a shuffle-map
// stage writes a shuffle; the result stage runs the action.
type stage struct {
	id      int
	top     *node
	write   *shuffleDep
	parents []*stage
	nodes   []*node
	name    string
	// per job run
	submitted  bool
	start, end time.Time
	windows    map[string]*usageWindow
	fetchFails int
}

// buildStage collects the stage's lineage (narrow ancestors of top up to
// and including shuffle reads) and its parent stages. Caller holds c.mu.
func (c *Context) buildStage(top *node, write *shuffleDep) *stage {
	c.nextStage++
	s := &stage{id: c.nextStage, top: top, write: write, name: top.Name}
	seen := map[int]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if seen[n.ID] {
			return
		}
		seen[n.ID] = true
		s.nodes = append(s.nodes, n)
		switch n.Op {
		case "shuffled":
			for _, sid := range n.Shuffle {
				s.parents = append(s.parents, c.shuffleStage(sid))
			}
		case "text", "range", "slice":
		default:
			walk(c.nodes[n.Parent])
		}
	}
	walk(top)
	return s
}

func (c *Context) shuffleStage(sid int) *stage {
	if s := c.shStages[sid]; s != nil {
		return s
	}
	dep := c.shuffles[sid]
	s := c.buildStage(c.nodes[dep.Parent], dep)
	c.shStages[sid] = s
	if c.outputs[sid] == nil {
		c.outputs[sid] = make([]loc, s.top.Parts)
	}
	return s
}

// missing lists the partitions a stage still has to compute.
func (c *Context) missing(s *stage, results []*taskResult) []int {
	var out []int
	if s.write == nil {
		for p, r := range results {
			if r == nil {
				out = append(out, p)
			}
		}
		return out
	}
	for p, l := range c.outputs[s.write.ID] {
		if l.Exec == "" || c.execs[l.Exec] == nil {
			out = append(out, p)
		}
	}
	return out
}

type taskItem struct {
	id       int64
	stage    *stage
	part     int
	attempt  int
	queuedAt time.Time
	exec     string
}

type completion struct {
	t   *taskItem
	res *taskResult
	err error // transport error: the executor could not be reached
}

// runJob computes every partition of top and runs the action on it.
func (c *Context) runJob(top *node, action, savePath string) ([]*taskResult, error) {
	c.jobMu.Lock()
	defer c.jobMu.Unlock()
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("context is closed")
	}
	final := c.buildStage(top, nil)
	c.mu.Unlock()
	results := make([]*taskResult, top.Parts)
	jobStart := time.Now()
	c.elog.emit(map[string]any{"event": "job_start", "time": now(), "action": action, "result_stage": final.id, "partitions": top.Parts})

	var pendingTasks []*taskItem
	running := map[int64]*taskItem{}
	inFlight := map[*stage]map[int]bool{} // partitions pending or running
	failures := map[string]int{}          // stage/partition -> failed attempts
	done := make(chan completion, 1024)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	// Tasks still running when the job fails are answered into done; drain
	// them in the background so no goroutine blocks.
	defer func() {
		if len(running) > 0 {
			go func(n int) {
				for ; n > 0; n-- {
					<-done
				}
			}(len(running))
		}
	}()

	var order []*stage
	var visit func(s *stage, seen map[*stage]bool)
	visit = func(s *stage, seen map[*stage]bool) {
		if seen[s] {
			return
		}
		seen[s] = true
		for _, p := range s.parents {
			visit(p, seen)
		}
		order = append(order, s)
	}
	c.mu.Lock()
	visit(final, map[*stage]bool{})
	c.mu.Unlock()

	for {
		c.mu.Lock()
		if c.fatal != nil {
			err := c.fatal
			c.mu.Unlock()
			c.elog.emit(map[string]any{"event": "job_end", "time": now(), "success": false, "error": err.Error()})
			return nil, err
		}
		// Submit every stage whose parents are complete.
		allDone := true
		for _, s := range order {
			miss := c.missing(s, results)
			if len(miss) == 0 {
				if s.submitted && s.end.IsZero() && len(inFlight[s]) == 0 {
					c.stageCompletedLocked(s)
				}
				continue
			}
			allDone = false
			ready := true
			for _, p := range s.parents {
				if len(c.missing(p, nil)) > 0 {
					ready = false
				}
			}
			if !ready {
				continue
			}
			if inFlight[s] == nil {
				inFlight[s] = map[int]bool{}
			}
			if !s.submitted || !s.end.IsZero() {
				// First run, or a resubmission of a stage whose outputs were lost.
				s.submitted, s.start, s.end = true, time.Now(), time.Time{}
				s.windows = map[string]*usageWindow{}
				parents := []int{}
				for _, p := range s.parents {
					parents = append(parents, p.id)
				}
				kind := "result"
				if s.write != nil {
					kind = "shuffle_map"
				}
				c.elog.emit(map[string]any{"event": "stage_submitted", "time": now(), "stage": s.id, "name": s.name, "kind": kind,
					"tasks": len(miss), "partitions": s.top.Parts, "parents": parents})
			}
			for _, p := range miss {
				if !inFlight[s][p] {
					inFlight[s][p] = true
					c.nextTask++
					pendingTasks = append(pendingTasks, &taskItem{id: c.nextTask, stage: s, part: p, queuedAt: time.Now()})
				}
			}
		}
		if allDone {
			c.pending = 0
			c.mu.Unlock()
			c.elog.emit(map[string]any{"event": "job_end", "time": now(), "success": true, "duration_s": time.Since(jobStart).Seconds()})
			return results, nil
		}
		// Dispatch to free slots, preferring executors with the task's cached
		// partition for up to LocalityWait.
		pendingTasks = c.dispatchLocked(pendingTasks, running, done, action, savePath)
		c.pending = len(pendingTasks)
		if len(c.execs) == 0 && c.everExec && len(pendingTasks) > 0 {
			c.target = max(c.target, 1)
			go c.pushTarget()
		}
		c.mu.Unlock()

		select {
		case <-c.wake:
		case <-tick.C:
		case comp := <-done:
			for {
				t := comp.t
				delete(running, t.id)
				c.mu.Lock()
				if e := c.execs[t.exec]; e != nil {
					e.running--
					if e.running == 0 {
						e.idleSince = time.Now()
					}
				}
				requeue, err := c.completeLocked(comp, results, failures)
				if requeue {
					t2 := *t
					c.nextTask++
					t2.id, t2.exec, t2.queuedAt = c.nextTask, "", time.Now()
					pendingTasks = append(pendingTasks, &t2)
				} else {
					delete(inFlight[t.stage], t.part)
				}
				c.mu.Unlock()
				if err != nil {
					c.elog.emit(map[string]any{"event": "job_end", "time": now(), "success": false, "error": err.Error()})
					return nil, err
				}
				select {
				case comp = <-done:
					continue
				default:
				}
				break
			}
		}
	}
}

// dispatchLocked starts pending tasks on free executor slots and returns
// those still pending.
func (c *Context) dispatchLocked(pending []*taskItem, running map[int64]*taskItem, done chan completion, action, savePath string) []*taskItem {
	if len(pending) == 0 || len(c.execs) == 0 {
		return pending
	}
	execs := make([]*execState, 0, len(c.execs))
	for _, e := range c.execs {
		execs = append(execs, e)
	}
	sort.Slice(execs, func(i, j int) bool {
		return execs[i].running < execs[j].running || execs[i].running == execs[j].running && execs[i].id < execs[j].id
	})
	now := time.Now()
	rest := pending[:0]
	for _, t := range pending {
		if !c.parentsReadyLocked(t.stage) {
			// A parent's outputs were lost with an executor: wait for them
			// to be recomputed rather than fail fetching them.
			rest = append(rest, t)
			continue
		}
		pref := c.preferredLocked(t)
		var chosen *execState
		if pref != "" {
			if e := c.execs[pref]; e != nil && e.running < e.cores {
				chosen = e
			} else if e != nil && now.Sub(t.queuedAt) < c.cfg.LocalityWait {
				rest = append(rest, t) // wait a little for the executor holding the data
				continue
			}
		}
		if chosen == nil {
			for _, e := range execs {
				if e.running < e.cores {
					chosen = e
					break
				}
			}
		}
		if chosen == nil {
			rest = append(rest, t)
			continue
		}
		chosen.running++
		t.exec = chosen.id
		running[t.id] = t
		spec := c.specLocked(t, action, savePath, pref == chosen.id)
		go c.send(chosen.url, t, spec, done)
	}
	return rest
}

func (c *Context) parentsReadyLocked(s *stage) bool {
	for _, p := range s.parents {
		if len(c.missing(p, nil)) > 0 {
			return false
		}
	}
	return true
}

// preferredLocked is the executor holding a cached partition the task reads.
func (c *Context) preferredLocked(t *taskItem) string {
	for _, n := range t.stage.nodes {
		if n.Cached {
			if l, ok := c.cacheLocs[n.ID][t.part]; ok {
				return l.Exec
			}
		}
	}
	return ""
}

func (c *Context) specLocked(t *taskItem, action, savePath string, local bool) *taskSpec {
	s := t.stage
	spec := &taskSpec{ID: t.id, Stage: s.id, Partition: t.part, Attempt: t.attempt, Top: s.top.ID, Nodes: s.nodes, Write: s.write}
	if s.write == nil {
		spec.Action, spec.SavePath = action, savePath
	}
	for _, n := range s.nodes {
		if n.Op == "shuffled" {
			if spec.Fetch == nil {
				spec.Fetch = map[int][]loc{}
			}
			for _, sid := range n.Shuffle {
				locs := make([]loc, len(c.outputs[sid]))
				for m, l := range c.outputs[sid] {
					if e := c.execs[l.Exec]; e != nil {
						locs[m] = loc{Exec: e.id, URL: e.url}
					}
				}
				spec.Fetch[sid] = locs
			}
		}
		if n.Cached {
			if l, ok := c.cacheLocs[n.ID][t.part]; ok {
				if spec.CacheLocs == nil {
					spec.CacheLocs = map[int]loc{}
				}
				spec.CacheLocs[n.ID] = l
			}
		}
	}
	return spec
}

// send runs one task on an executor and reports its completion.
func (c *Context) send(url string, t *taskItem, spec *taskSpec, done chan<- completion) {
	b, err := json.Marshal(spec)
	if err != nil {
		done <- completion{t: t, res: &taskResult{Error: "encoding task: " + err.Error()}}
		return
	}
	resp, err := c.http.Post(url+"/task", "application/json", bytes.NewReader(b))
	if err != nil {
		done <- completion{t: t, err: err}
		return
	}
	defer resp.Body.Close()
	var res taskResult
	if resp.StatusCode != http.StatusOK {
		var msg bytes.Buffer
		msg.ReadFrom(resp.Body)
		done <- completion{t: t, res: &taskResult{Error: fmt.Sprintf("executor answered %s: %s", resp.Status, strings.TrimSpace(msg.String()))}}
		return
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		done <- completion{t: t, err: fmt.Errorf("reading task result: %w", err)}
		return
	}
	done <- completion{t: t, res: &res}
}

// completeLocked records a task's outcome. It returns whether the task must
// run again, and an error that fails the job.
func (c *Context) completeLocked(comp completion, results []*taskResult, failures map[string]int) (bool, error) {
	t := comp.t
	s := t.stage
	ev := map[string]any{"event": "task_end", "time": now(), "task": t.id, "stage": s.id, "partition": t.part, "attempt": t.attempt, "executor": t.exec}
	defer func() { c.elog.emit(ev) }()
	if comp.err != nil {
		// The executor did not answer: it is gone (kill -9, a lost agent).
		// Its outputs are recomputed from lineage; this is not the task's fault.
		ev["success"], ev["error"] = false, "executor unreachable: "+comp.err.Error()
		if c.execs[t.exec] != nil {
			c.executorLostLocked(t.exec, "unreachable while running a task: "+comp.err.Error())
		}
		return true, nil
	}
	res := comp.res
	m := res.Metrics
	ev["duration_s"] = float64(m.End-m.Start) / 1e9
	ev["cpu_time_s"] = float64(m.CPUNanos) / 1e9
	ev["bytes_read"], ev["shuffle_write_bytes"], ev["shuffle_fetch_bytes"], ev["records_out"] = m.BytesRead, m.ShuffleWrite, m.ShuffleFetch, m.RecordsOut
	ev["cache_hit"] = m.CacheHit
	if res.Fetch != nil {
		ev["success"], ev["error"] = false, res.Error
		s.fetchFails++
		if l := c.outputs[res.Fetch.Shuffle]; res.Fetch.Map < len(l) && l[res.Fetch.Map].Exec == res.Fetch.Exec {
			c.outputs[res.Fetch.Shuffle][res.Fetch.Map] = loc{}
		}
		if s.fetchFails > 50 {
			return false, fmt.Errorf("stage %d (%s): too many shuffle fetch failures; last: %s", s.id, s.name, res.Error)
		}
		if e := c.execs[res.Fetch.Exec]; e != nil {
			go c.probe(e.id, e.url)
		}
		return true, nil
	}
	if res.Error != "" {
		ev["success"], ev["error"] = false, res.Error
		key := fmt.Sprintf("%d/%d", s.id, t.part)
		failures[key]++
		if failures[key] >= c.cfg.MaxTaskFailures {
			return false, fmt.Errorf("task for partition %d of stage %d (%s) failed %d times; last error: %s", t.part, s.id, s.name, failures[key], res.Error)
		}
		t.attempt++
		return true, nil
	}
	ev["success"] = true
	e := c.execs[t.exec]
	if e == nil {
		// The executor was lost after answering: its outputs went with it,
		// and the stage's missing partitions are submitted again.
		return false, nil
	}
	if s.write != nil {
		c.outputs[s.write.ID][t.part] = loc{Exec: e.id, URL: e.url}
	} else {
		results[t.part] = res
	}
	for _, id := range res.Cached {
		if c.cacheLocs[id] == nil {
			c.cacheLocs[id] = map[int]loc{}
		}
		c.cacheLocs[id][t.part] = loc{Exec: e.id, URL: e.url}
	}
	w := s.windows[e.id]
	if w == nil {
		w = &usageWindow{stage: s.id, exec: e.id, start: m.Start, end: m.End}
		s.windows[e.id] = w
	}
	w.start, w.end = min(w.start, m.Start), max(w.end, m.End)
	w.tasks++
	w.cpuTime += m.CPUNanos
	w.bytesRead += m.BytesRead
	w.shuffleWrite += m.ShuffleWrite
	w.shuffleFetch += m.ShuffleFetch
	return false, nil
}

// probe checks an executor that failed to serve a block; an executor that
// does not answer is lost.
func (c *Context) probe(id, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	resp, err := c.http.Do(req)
	if err == nil {
		resp.Body.Close()
		return
	}
	c.executorLost(id, "did not serve a block and does not answer: "+err.Error())
}

func (c *Context) stageCompletedLocked(s *stage) {
	s.end = time.Now()
	c.elog.emit(map[string]any{"event": "stage_completed", "time": nowOf(s.end), "stage": s.id, "name": s.name,
		"start": nowOf(s.start), "end": nowOf(s.end), "duration_s": s.end.Sub(s.start).Seconds(), "executors": len(s.windows)})
	for _, w := range s.windows {
		c.usage = append(c.usage, w)
	}
	s.windows = map[string]*usageWindow{}
	c.flushUsage(false)
}

func now() float64              { return nowOf(time.Now()) }
func nowOf(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
