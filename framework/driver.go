package framework

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/allot-sched/allot/framework/dispatch"
	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/framework/eventlog"
)

// The driver is split by concern, all in this package:
//
//	driver.go    Context: construction, shutdown, the lock and what it guards
//	config.go    Config and its defaults
//	clock.go     the injected Clock
//	dag.go       lineage: datasets, shuffles, stages, where partitions live
//	job.go       the job loop: submit ready stages, dispatch, complete tasks
//	tasks.go     task dispatch (the shell around a dispatch.Dispatcher),
//	             sending tasks to executors, recording their outcomes
//	pool.go      the executor pool: registration, heartbeats, loss
//	scaling.go   dynamic allocation (the shell around an elastic.Policy)
//	usage.go     per-stage executor usage for the event log
//	utilisation.go, ispark_inputs.go, handoff.go  iSpark: per-epoch
//	             utilisation, the policy's inputs, cache-preserving scale-down
//	mesos_inverse.go  inverse offers: "others are waiting", their answers
//	handoff_exec.go   the executor's side of a handoff (POST /fetch)
//	local.go, mesos.go  the backends that start executors
//	mesos_executor.go   the executor process's side of a Mesos agent
//	executor.go, plan.go, blocks.go  the executor: tasks, lineage, blocks
//	plan_read.go     the executor reading input splits (text, bytes)
//	plan_shuffle.go  the executor's shuffle: fetch and aggregate, write
//	             and combine map outputs

// backend gets executors from somewhere: in-process, or Mesos offers.
//
// The driver calls a backend without holding Context.mu, and a backend
// calls the driver (fail, executorLost, registration) without holding its
// own lock, so the two kinds of lock are never held together.
type backend interface {
	setTarget(n int)
	release(id string) // stop one executor (it is already forgotten by the driver)
	known(id string) bool
	stop()
}

// Context is a driver: it owns the lineage, the executors and the event log.
type Context struct {
	// Set by NewContext and never changed, so read without a lock.
	cfg        Config
	masterTLS  *tls.Config // nil: plain HTTP to the masters (Config.TLSCA)
	clock      Clock
	dispatcher dispatch.Dispatcher
	scaling    elastic.Policy
	backend    backend
	elog       *eventlog.Writer // safe for concurrent use; a leaf lock
	srv        *http.Server
	url        string
	http       *http.Client
	started    time.Time
	wake       chan struct{} // nudges the job loop (buffered, 1)
	stopBg     chan struct{} // closed by Close: stops the scaling loop

	// scaledDown is closed once the first iSpark handoff is done
	// (testhooks.go: the AwaitScaleDown hook waits on it).
	scaledDown     chan struct{}
	scaledDownOnce sync.Once
	// jobsDone counts ended jobs for the JobGate hook.
	jobsDone atomic.Int64

	// jobMu serialises jobs: one runJob at a time, so the per-run fields of
	// stages (stage.submitted, start, end, windows, fetchFails) have a
	// single writer, the running job's goroutine (which still writes them
	// under mu, where the pool and Close read them). It guards no other
	// field. Lock order: jobMu, then mu.
	jobMu sync.Mutex

	// targetMu serialises pushTarget, so the backend hears targets in the
	// order they were set and the last push carries the latest one. It
	// guards no field; it is held across backend.setTarget (which takes the
	// backend's lock) and briefly takes mu inside. Lock order: targetMu,
	// then mu; targetMu, then the backend's lock.
	targetMu sync.Mutex

	// mu guards every field below: the lineage (dag), the executor pool
	// (pool), the stage usage windows awaiting samples, fatal and closed.
	// It also guards the per-run fields of the stages in dag (see jobMu).
	// Events are written while it is held (the event log's lock is a
	// leaf); the backend is never called while it is held.
	mu    sync.Mutex
	dag   dag
	pool  pool
	usage []*usageWindow // stage windows waiting for their samples
	// jobStages are the running job's stages (nil between jobs), for
	// iSpark's VIP partitions.
	jobStages []*stage
	fatal     error // fails the running and every later job
	closed    bool
}

// NewContext starts a driver: its HTTP server for executors, the event log
// and the backend, which starts asking for executors at once.
func NewContext(cfg Config) (*Context, error) {
	cfg.setDefaults()
	if !cfg.Local && cfg.Master == "" {
		return nil, fmt.Errorf("no master: give --master host:port (allot dev listens on 127.0.0.1:5050) or --local")
	}
	c := &Context{cfg: cfg, clock: cfg.Clock, dispatcher: cfg.Dispatcher, scaling: cfg.Scaling, dag: newDAG(), pool: newPool(cfg.Executors),
		wake: make(chan struct{}, 1), stopBg: make(chan struct{}), scaledDown: make(chan struct{}),
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 1024}}}
	c.started = c.clock.Now()
	if err := c.loadMasterTLS(); err != nil {
		return nil, err
	}
	bo, err := c.wrapBackoff()
	if err != nil {
		return nil, err
	}
	if c.elog, err = eventlog.Create(cfg.EventLogDir, cfg.App); err != nil {
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
	c.emit(&eventlog.ApplicationStart{App: cfg.App, Time: c.now(), InputBytes: cfg.InputBytes, EventLog: c.elog.Path(), Settings: eventlog.Settings{
		Executors: cfg.Executors, Cores: cfg.Cores, MemMB: cfg.MemMB, BlockMemMB: cfg.BlockMemMB, Dynamic: cfg.Dynamic,
		MinExecutors: cfg.MinExecutors, MaxExecutors: cfg.MaxExecutors, Local: cfg.Local, Master: cfg.Master}})
	c.backend.setTarget(cfg.Executors)
	go c.scaleLoop()
	if mb, ok := c.backend.(*mesosBackend); ok && bo != nil {
		go c.backoffLoop(mb, bo)
	}
	return c, nil
}

// EventLog is the path of this run's event log.
func (c *Context) EventLog() string { return c.elog.Path() }

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
	c.flushUsageLocked(true)
	inputBytes := c.dag.inputBytes
	c.mu.Unlock()
	c.backend.stop()
	ev := &eventlog.ApplicationEnd{Time: c.now(), DurationS: c.clock.Now().Sub(c.started).Seconds(), Success: appErr == nil, InputBytes: inputBytes,
		RecomputedPartitions: c.Recomputations()}
	if appErr != nil {
		ev.Error = appErr.Error()
	}
	c.emit(ev)
	c.srv.Close()
	return c.elog.Close()
}

// notify wakes the job loop (a new executor, a lost one, a failure).
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

// emit writes an event; a log that cannot be written does not stop the
// application.
func (c *Context) emit(ev eventlog.Event) { c.elog.Write(ev) }

// now is the event log's "time" of an event happening now.
func (c *Context) now() float64 { return unixSeconds(c.clock.Now()) }
