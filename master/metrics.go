package master

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the master's Prometheus series, on a registry of its own so
// that several masters in one test process do not collide.
type metrics struct {
	reg           *prometheus.Registry
	offers        prometheus.Counter
	gpuFiltered   prometheus.Counter
	tasksLaunched prometheus.Counter
	statusUpdates *prometheus.CounterVec
	calls         *prometheus.CounterVec
	badRequests   *prometheus.CounterVec
	allocCycle    prometheus.Histogram
	leaderChanges prometheus.Counter
	commitLatency prometheus.Histogram
	applyLatency  prometheus.Histogram
	allocErrors   *prometheus.CounterVec
	callBatch     prometheus.Histogram
	callWait      prometheus.Histogram
	// invalidUpdates are status updates for a task already over
	// (acknowledged to the agent, never forwarded); refusedAgents are
	// REGISTERs of removed agents (history.go).
	invalidUpdates prometheus.Counter
	refusedAgents  prometheus.Counter
	tasksEnded     *prometheus.CounterVec // taskcounters.go
}

func newMetrics(m *Master) *metrics {
	x := &metrics{
		reg:    prometheus.NewRegistry(),
		offers: prometheus.NewCounter(prometheus.CounterOpts{Name: "allot_master_offers_total", Help: "Offers made."}),
		gpuFiltered: prometheus.NewCounter(prometheus.CounterOpts{Name: "allot_master_gpu_filtered_offers_total",
			Help: "Decisions not offered because the agent has GPUs and the framework lacks GPU_RESOURCES (--filter-gpu-resources)."}),
		tasksLaunched: prometheus.NewCounter(prometheus.CounterOpts{Name: "allot_master_tasks_launched_total", Help: "Tasks launched."}),
		statusUpdates: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "allot_master_status_updates_total", Help: "Task status updates by state."}, []string{"state"}),
		calls:         prometheus.NewCounterVec(prometheus.CounterOpts{Name: "allot_master_scheduler_calls_total", Help: "Scheduler calls by type."}, []string{"type"}),
		badRequests:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "allot_master_bad_requests_total", Help: "Requests answered 4xx by API."}, []string{"api"}),
		allocCycle: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "allot_master_allocation_cycle_seconds", Help: "Duration of one allocation cycle.",
			Buckets: prometheus.ExponentialBuckets(1e-5, 4, 10)}),
		leaderChanges: prometheus.NewCounter(prometheus.CounterOpts{Name: "allot_master_leader_elections_total", Help: "Times this master became the leader."}),
		commitLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "allot_master_registry_commit_seconds",
			Help:    "From proposing a batch of registry commands to raft until it is committed and applied on the leader.",
			Buckets: prometheus.ExponentialBuckets(1e-4, 3, 12)}),
	}
	x.applyLatency = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "allot_master_registry_apply_seconds",
		Help:    "Time to apply one raft log entry (a batch of registry commands) to the registry, on every master.",
		Buckets: prometheus.ExponentialBuckets(1e-6, 4, 10)})
	x.allocErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "allot_master_allocator_errors_total",
		Help: "Allocator calls that failed where no caller could be told (by call); each is a place where the master's and the allocator's view disagreed."},
		[]string{"op"})
	x.reg.MustRegister(x.allocErrors)
	x.callBatch = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "allot_master_call_batch_size",
		Help:    "Scheduler and agent calls run under one acquisition of the master's lock (combine.go).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 9)})
	x.callWait = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "allot_master_call_lock_seconds",
		Help:    "From a scheduler or agent call queuing for the master's lock to its answer: the wait for the lock and for its batch to run (combine.go).",
		Buckets: prometheus.ExponentialBuckets(1e-5, 3, 14)})
	x.reg.MustRegister(x.callBatch, x.callWait)
	x.invalidUpdates = prometheus.NewCounter(prometheus.CounterOpts{Name: "allot_master_invalid_status_updates_total",
		Help: "Status updates for a task already terminal or completed in the master: acknowledged to the agent, not forwarded (Mesos's master/invalid_status_updates)."})
	x.refusedAgents = prometheus.NewCounter(prometheus.CounterOpts{Name: "allot_master_removed_agent_registrations_total",
		Help: "REGISTERs refused (410) because the agent id was removed; the agent shuts its executors down and registers afresh."})
	x.reg.MustRegister(x.invalidUpdates, x.refusedAgents, x.gpuFiltered)
	x.reg.MustRegister(unreachableAgentsGauge(m))
	x.tasksEnded = newTasksEndedCounter(x.reg)
	x.reg.MustRegister(&unplaceableCollector{m: m}) // placement.go
	x.reg.MustRegister(x.offers, x.tasksLaunched, x.statusUpdates, x.calls, x.badRequests, x.allocCycle, x.leaderChanges, x.commitLatency, x.applyLatency)
	x.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "allot_master_is_leader", Help: "1 while this master leads and serves."},
		func() float64 {
			if m.leader.Load() {
				return 1
			}
			return 0
		}))
	x.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "allot_master_raft_state",
		Help: "Raft state: 0 follower, 1 candidate, 2 leader, 3 shutdown."},
		func() float64 {
			if m.rep == nil {
				return 0
			}
			return float64(m.rep.raft.State())
		}))
	x.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "allot_master_registry_records",
		Help: "Records in the registry (agents, frameworks, tasks, config, completed tasks, removed agent ids)."},
		func() float64 { return float64(m.reg.Size()) }))
	x.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "allot_master_raft_applied_index",
		Help: "Last raft log index applied to the registry."},
		func() float64 {
			if m.rep == nil {
				return 0
			}
			return float64(m.rep.raft.AppliedIndex())
		}))
	x.reg.MustRegister(&stateCollector{m: m})
	return x
}

// stateCollector reports gauges read from live state at scrape time.
type stateCollector struct{ m *Master }

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descAgents
	ch <- descFrameworks
	ch <- descTasks
	ch <- descShare
	ch <- descOffers
	ch <- descOpSubs
}

// Collect reports the state gauges without waiting for m.mu: a scrape of
// a loaded leader took over 5 s when it queued for the lock like any call
// (docs/scale.md), and while it held the lock every call waited for it. If
// the lock is free it reads live state (and keeps it for the next scrape);
// if not, it reports the last reading, and asks the allocation cycle to
// take a new one under the lock it holds anyway, for the next scrape.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	m := c.m
	g := m.gauges.Load()
	if m.mu.TryLock() {
		g = m.readGaugesLocked()
		m.mu.Unlock()
	} else {
		m.gaugesWanted.Store(true)
	}
	if g != nil {
		g.emit(ch)
	}
}

// stateGauges is a reading of the state gauges, taken under m.mu and
// published through m.gauges.
type stateGauges struct {
	agentsConn, agentsDisc int
	fwsConn, fwsDisc       int
	tasks                  map[string]int
	shares                 map[string]float64
	offers, opSubs         int
}

// readGaugesLocked reads the state gauges from live state and publishes
// them for scrapes that find m.mu held. Caller holds m.mu.
func (m *Master) readGaugesLocked() *stateGauges {
	g := &stateGauges{tasks: map[string]int{}, offers: len(m.offers), opSubs: len(m.opSubs)}
	m.unreachableSeen.Store(int64(len(m.unreachable)))
	for _, a := range m.agents {
		if a.stream != nil {
			g.agentsConn++
		} else {
			g.agentsDisc++
		}
	}
	for _, fw := range m.frameworks {
		if fw.stream != nil {
			g.fwsConn++
		} else {
			g.fwsDisc++
		}
		for _, t := range fw.tasks {
			g.tasks[t.state.String()]++
		}
	}
	g.shares = m.alloc.RoleShares()
	m.gauges.Store(g)
	m.gaugesWanted.Store(false)
	return g
}

// refreshGaugesLocked re-reads the state gauges if a scrape found m.mu
// held since the last reading; the allocation cycle calls it. Only then: a
// reading walks every agent, framework and task (0.03-0.06 CPU s of a 20 s
// window at 5,000 agents x 500 frameworks when every cycle took one a
// second, docs/scale.md), and nobody may be scraping. Caller holds m.mu.
func (m *Master) refreshGaugesLocked() {
	if m.gaugesWanted.Load() {
		m.readGaugesLocked()
	}
}

func (g *stateGauges) emit(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(descAgents, float64(g.agentsConn), "connected")
	gauge(descAgents, float64(g.agentsDisc), "disconnected")
	gauge(descFrameworks, float64(g.fwsConn), "connected")
	gauge(descFrameworks, float64(g.fwsDisc), "disconnected")
	for s, n := range g.tasks {
		gauge(descTasks, float64(n), s)
	}
	for role, s := range g.shares {
		gauge(descShare, s, role)
	}
	gauge(descOffers, float64(g.offers))
	gauge(descOpSubs, float64(g.opSubs))
}

var (
	descAgents     = prometheus.NewDesc("allot_master_agents", "Agents by connection state.", []string{"state"}, nil)
	descFrameworks = prometheus.NewDesc("allot_master_frameworks", "Frameworks by connection state.", []string{"state"}, nil)
	descTasks      = prometheus.NewDesc("allot_master_tasks", "Tasks by state.", []string{"state"}, nil)
	descShare      = prometheus.NewDesc("allot_master_role_dominant_share", "Weighted dominant share per role.", []string{"role"}, nil)
	descOffers     = prometheus.NewDesc("allot_master_outstanding_offers", "Offers not yet accepted, declined or rescinded.", nil, nil)
	descOpSubs     = prometheus.NewDesc("allot_master_operator_subscribers", "Live operator API subscriptions.", nil, nil)
)

// allocOK reports whether err, what the allocator's call op answered, is
// nil. If not, it logs the error with the ids involved (key, value pairs:
// "framework_id", id, ...) and counts it in
// allot_master_allocator_errors_total{op}. It is for allocator calls whose
// error no client will see: an event the allocator refuses means its state
// and the master's disagree, which must not pass silently.
func (m *Master) allocOK(op string, err error, ids ...string) bool {
	if err == nil {
		return true
	}
	m.m.allocErrors.WithLabelValues(op).Inc()
	ev := m.log.Warn().Err(err).Str("op", op)
	for i := 0; i+1 < len(ids); i += 2 {
		ev = ev.Str(ids[i], ids[i+1])
	}
	ev.Msg("allocator refused an event")
	return false
}
