package scalebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Config says what to run. Zero values take the defaults set by Defaults.
type Config struct {
	Bin                string // the allot binary the masters run
	Agents, Frameworks int
	Masters            int           // 1 or 3
	Duration           time.Duration // the measured window, after registration
	Failover           bool          // kill -9 the leader after the window (Masters > 1)
	AllocationInterval time.Duration
	AgentResources     string
	TasksPerFramework  int           // tasks each framework keeps in flight
	TaskMin, TaskMax   time.Duration // a task "runs" a uniform draw in [min, max]
	SetupTimeout       time.Duration // registration and subscription each
	MasterFlags        []string      // extra flags for every master
	RaftMultiplier     int           // the masters' --raft-multiplier (3 masters; 0: 1)
	Dir                string        // work dirs (default: a temporary one, removed)
	// ProfilePath, if set, receives the leader's CPU profile over the
	// window (its /debug/pprof/profile), and ProfilePath+".mutex" its
	// mutex profile (/debug/pprof/mutex: who held a lock others waited
	// for, and how long they waited); the masters then run with
	// --mutex-profile-fraction.
	ProfilePath string
}

// Defaults fills the zero fields.
func (c *Config) Defaults() {
	if c.Masters == 0 {
		c.Masters = 1
	}
	if c.Duration == 0 {
		c.Duration = 30 * time.Second
	}
	if c.AllocationInterval == 0 {
		c.AllocationInterval = time.Second
	}
	if c.AgentResources == "" {
		c.AgentResources = "cpus:8;mem:16384;disk:100000;ports:[31000-32000]"
	}
	if c.TasksPerFramework == 0 {
		c.TasksPerFramework = 10
	}
	if c.TaskMin == 0 && c.TaskMax == 0 {
		c.TaskMin, c.TaskMax = time.Second, 5*time.Second
	}
	if c.SetupTimeout == 0 {
		c.SetupTimeout = 90 * time.Second
	}
}

// Report is what one run measured. Durations are seconds unless named _ms.
type Report struct {
	Agents             int     `json:"agents"`
	Frameworks         int     `json:"frameworks"`
	Masters            int     `json:"masters"`
	RaftMultiplier     int     `json:"raft_multiplier,omitempty"`
	AllocationInterval float64 `json:"allocation_interval_s"`
	Window             float64 `json:"window_s"`
	LoadAvgStart       string  `json:"loadavg_start"`
	LoadAvgEnd         string  `json:"loadavg_end"`
	Registered         int     `json:"registered"`
	RegisterAll        float64 `json:"register_all_s"` // -1: not all within the setup timeout
	OfferLatency       Summary `json:"offer_latency"`
	OfferLatencyFrom   string  `json:"offer_latency_from"`
	Offers             int64   `json:"offers"`
	LaunchRate         float64 `json:"launch_per_s"`
	TasksRunning       int64   `json:"tasks_started"`
	TasksFinished      int64   `json:"tasks_finished"`
	StatusLatency      Summary `json:"status_update_latency"`
	MasterCPU          float64 `json:"master_cpu_s"`       // the leader's, over the window
	MasterCPUTotal     float64 `json:"master_cpu_total_s"` // the leader's, since it started
	MasterRSSMiB       float64 `json:"master_rss_mib"`     // the leader's peak (VmHWM)
	HarnessCPU         float64 `json:"harness_cpu_s"`      // this process's (agents and frameworks), over the window
	MasterRunQueue     float64 `json:"master_runqueue_s"`  // the leader's threads' time runnable but waiting for a CPU, over the window
	RaftCommitP50      float64 `json:"raft_commit_p50_ms"`
	RaftCommitP99      float64 `json:"raft_commit_p99_ms"`
	RaftCommits        float64 `json:"raft_commits"`
	AllocCycles        float64 `json:"alloc_cycles"` // the leader's allocation cycles in the window (allot_master_allocation_cycle_seconds); -1 unknown
	// CallLockP50 and CallLockP99 are how long the leader's scheduler and
	// agent calls waited for its lock and their batch, in the window
	// (allot_master_call_lock_seconds; 0 from a master without it).
	CallLockP50 float64   `json:"call_lock_p50_ms"`
	CallLockP99 float64   `json:"call_lock_p99_ms"`
	Failover    *Failover `json:"failover,omitempty"`
}

// Failover is the kill -9 of the leader under load.
type Failover struct {
	Elected      float64 `json:"elected_s"`      // a new leader named by the survivors
	Reregistered float64 `json:"reregistered_s"` // every agent registered again (-1: not within the bound)
	OffersFlow   float64 `json:"offers_flow_s"`  // the first OFFERS allocated by the new leader arrives
	Agents       int     `json:"agents_reregistered"`
}

// stats is what agents and frameworks count while the run goes on.
type stats struct {
	registered, launchedOnAgents, accepted atomic.Int64
	running, finished, offerEvents, offers atomic.Int64
	measuring                              atomic.Bool
	failoverAt, firstOfferAfter            atomic.Int64 // unix ns
	sent                                   sync.Map     // statusKey -> time.Time the agent sent it
	offerLat, statusLat                    Latencies
}

func (s *stats) noteOffer(at, now time.Time) {
	s.offers.Add(1)
	if f := s.failoverAt.Load(); f != 0 && at.UnixNano() > f {
		s.firstOfferAfter.CompareAndSwap(0, now.UnixNano())
	}
	if s.measuring.Load() {
		s.offerLat.Add(now.Sub(at))
	}
}

func (s *stats) noteStatus(sent, now time.Time, state mesos.TaskState) {
	switch state {
	case mesos.TASK_RUNNING:
		s.running.Add(1)
	case mesos.TASK_FINISHED:
		s.finished.Add(1)
	}
	if s.measuring.Load() {
		s.statusLat.Add(now.Sub(sent))
	}
}

// run is one bench run's moving parts.
type run struct {
	cfg     Config
	out     io.Writer
	st      *stats
	hc      *http.Client
	masters []*masterProc
	leader  *masterProc
	pool    *agentPool
	start   time.Time
	phase   atomic.Value // string
}

// Run starts the masters, the agents and the frameworks, measures, and
// stops everything. Progress lines go to progress.
func Run(ctx context.Context, cfg Config, progress io.Writer) (*Report, error) {
	cfg.Defaults()
	if cfg.Masters != 1 && cfg.Masters != 3 {
		return nil, errors.New("masters must be 1 or 3")
	}
	if err := raiseFileLimit(cfg.Agents + 4*cfg.Frameworks + 1024); err != nil {
		return nil, err
	}
	dir := cfg.Dir
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	} else {
		d, err := os.MkdirTemp("", "allot-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	r := &run{cfg: cfg, out: progress, st: &stats{}, hc: &http.Client{Timeout: 5 * time.Second}, start: time.Now()}
	r.phase.Store("masters")
	rep := &Report{Agents: cfg.Agents, Frameworks: cfg.Frameworks, Masters: cfg.Masters, LoadAvgStart: loadAvg(), RaftMultiplier: cfg.RaftMultiplier,
		AllocationInterval: cfg.AllocationInterval.Seconds(), OfferLatencyFrom: "allocation cycle start stamped in the offer id by the master (--stamp-offers) to OFFERS decoded by the framework"}
	ms, err := startMasters(ctx, cfg, dir)
	if err != nil {
		return nil, err
	}
	r.masters = ms
	defer stopMasters(ms)
	if r.leader, err = leaderOf(ctx, r.hc, ms, 30*time.Second); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go r.progress(ctx)
	err = r.measure(ctx, rep)
	cancel()
	if r.pool != nil {
		r.pool.wait()
	}
	rep.LoadAvgEnd = loadAvg()
	return rep, err
}

// measure runs the phases: registration, subscription, the window, and the
// failover if asked.
func (r *run) measure(ctx context.Context, rep *Report) error {
	var addrs []string
	for _, m := range r.masters {
		addrs = append(addrs, m.addr)
	}
	r.phase.Store("register")
	r.pool = newAgentPool(r.cfg, &leaderHint{hc: r.hc, masters: addrs, addr: r.leader.addr}, r.st)
	regStart := time.Now()
	r.pool.start(ctx)
	rep.RegisterAll = -1
	if waitFor(ctx, r.cfg.SetupTimeout, func() bool { return r.st.registered.Load() == int64(r.cfg.Agents) }) {
		rep.RegisterAll = round(time.Since(regStart).Seconds())
	}
	rep.Registered = int(r.st.registered.Load())
	r.phase.Store("subscribe")
	var fwWG sync.WaitGroup
	if _, err := startFrameworks(ctx, r.cfg, addrs, r.st, &fwWG); err != nil {
		return err
	}
	r.window(ctx, rep)
	if r.cfg.Failover && len(r.masters) > 1 {
		r.phase.Store("failover")
		rep.Failover = r.failover(ctx)
	}
	r.phase.Store("stopping")
	return ctx.Err()
}

// window measures for cfg.Duration with every agent and framework up.
func (r *run) window(ctx context.Context, rep *Report) {
	r.phase.Store("window")
	before, _ := readProc(r.leader.pid())
	self0, _ := readProc(os.Getpid())
	wait0, leader0 := runQueueWait(r.leader.pid()), r.leader
	if r.cfg.ProfilePath != "" {
		go r.profile(r.leader, r.cfg.ProfilePath, "profile", r.cfg.Duration)
		go r.profile(r.leader, r.cfg.ProfilePath+".mutex", "mutex", r.cfg.Duration)
	}
	cycles0, ok0 := r.cycles(r.leader)
	lock0, _ := scrapeHistogram(r.scrapeHC(), r.leader.addr, callLockMetric)
	running0, t0 := r.st.running.Load(), time.Now()
	r.st.measuring.Store(true)
	select {
	case <-ctx.Done():
	case <-time.After(r.cfg.Duration):
	}
	r.st.measuring.Store(false)
	el := time.Since(t0).Seconds()
	if l, err := leaderOf(ctx, r.hc, r.masters, 5*time.Second); err == nil && l != r.leader {
		fmt.Fprintf(r.out, "leadership moved during the window: %s -> %s (CPU and RSS below are the new leader's)\n", r.leader.addr, l.addr)
		r.leader = l
	}
	after, _ := readProc(r.leader.pid())
	self1, _ := readProc(os.Getpid())
	rep.HarnessCPU = round(self1.CPUSeconds - self0.CPUSeconds)
	if r.leader == leader0 {
		rep.MasterRunQueue = round((runQueueWait(r.leader.pid()) - wait0).Seconds())
		rep.AllocCycles = -1
		if cycles1, ok1 := r.cycles(r.leader); ok0 && ok1 {
			rep.AllocCycles = cycles1 - cycles0
		}
		if h, err := scrapeHistogram(r.scrapeHC(), r.leader.addr, callLockMetric); err == nil && h.since(lock0).count() > 0 {
			d := h.since(lock0)
			rep.CallLockP50, rep.CallLockP99 = round(d.quantile(0.5)*1e3), round(d.quantile(0.99)*1e3)
		}
	}
	rep.Window = round(el)
	rep.OfferLatency, rep.StatusLatency = r.st.offerLat.Summary(), r.st.statusLat.Summary()
	rep.Offers = r.st.offers.Load()
	rep.TasksRunning, rep.TasksFinished = r.st.running.Load(), r.st.finished.Load()
	rep.LaunchRate = round((float64(rep.TasksRunning - running0)) / el)
	rep.MasterCPU, rep.MasterCPUTotal = round(after.CPUSeconds-before.CPUSeconds), round(after.CPUSeconds)
	rep.MasterRSSMiB = round(float64(after.HWM) / (1 << 20))
	if h, err := scrapeHistogram(r.hc, r.leader.addr, "allot_master_registry_commit_seconds"); err == nil {
		rep.RaftCommitP50, rep.RaftCommitP99 = round(h.quantile(0.5)*1e3), round(h.quantile(0.99)*1e3)
		rep.RaftCommits = h.count()
	}
}

// callLockMetric is the master's histogram of its calls' wait for its lock.
const callLockMetric = "allot_master_call_lock_seconds"

// cycles is how many allocation cycles m has run, if it answered.
func (r *run) cycles(m *masterProc) (float64, bool) {
	h, err := scrapeHistogram(r.scrapeHC(), m.addr, "allot_master_allocation_cycle_seconds")
	if err != nil || len(h.counts) == 0 {
		return 0, false
	}
	return h.count(), true
}

// scrapeHC is the client for the figures scraped from /metrics around the
// window. A loaded leader can take longer than r.hc's 5 s to answer: its
// state gauges wait for its lock.
func (r *run) scrapeHC() *http.Client { return &http.Client{Timeout: 30 * time.Second} }

// profile saves m's profile kind ("profile" for CPU, "mutex") over d to
// path; for "mutex" the master sends the difference over d.
func (r *run) profile(m *masterProc, path, kind string, d time.Duration) {
	secs := max(int(d.Seconds())-1, 1)
	hc := &http.Client{Timeout: d + 30*time.Second}
	resp, err := hc.Get(fmt.Sprintf("http://%s/debug/pprof/%s?seconds=%d", m.addr, kind, secs))
	if err != nil {
		fmt.Fprintf(r.out, "profile: %v\n", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(r.out, "profile: %v\n", err)
		return
	}
	io.Copy(f, resp.Body)
	f.Close()
}

// failover kills the leader with SIGKILL and times the recovery, for at
// most a minute.
func (r *run) failover(ctx context.Context) *Failover {
	f := &Failover{Reregistered: -1, OffersFlow: -1}
	// Leadership may have moved during the window: kill whoever leads now.
	old, err := leaderOf(ctx, r.hc, r.masters, 30*time.Second)
	if err != nil {
		return f
	}
	killAt := time.Now()
	r.st.failoverAt.Store(killAt.UnixNano())
	old.cmd.Process.Kill()
	<-old.exited
	if l, err := leaderOf(ctx, r.hc, r.masters, time.Minute); err == nil {
		r.leader = l
		f.Elected = round(time.Since(killAt).Seconds())
		if r.cfg.ProfilePath != "" {
			go r.profile(l, r.cfg.ProfilePath+".failover", "profile", 20*time.Second)
		}
	}
	bound := time.Minute - time.Since(killAt)
	if waitFor(ctx, bound, func() bool { return r.pool.registeredSince(killAt) == r.cfg.Agents }) {
		f.Reregistered = round(time.Since(killAt).Seconds())
	}
	f.Agents = r.pool.registeredSince(killAt)
	waitFor(ctx, time.Minute-time.Since(killAt), func() bool { return r.st.firstOfferAfter.Load() != 0 })
	if at := r.st.firstOfferAfter.Load(); at != 0 {
		f.OffersFlow = round(time.Unix(0, at).Sub(killAt).Seconds())
	}
	return f
}

// progress prints a line every 2 s until ctx ends.
func (r *run) progress(ctx context.Context) {
	if r.out == nil {
		return
	}
	t := time.NewTicker(2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ps, _ := readProc(r.leader.pid())
		fmt.Fprintf(r.out, "[%5.0fs] %-9s agents %d/%d  offers %d  tasks running %d finished %d  leader cpu %.1fs rss %.0f MiB  load %s\n",
			time.Since(r.start).Seconds(), r.phase.Load(), r.st.registered.Load(), r.cfg.Agents, r.st.offers.Load(),
			r.st.running.Load(), r.st.finished.Load(), ps.CPUSeconds, float64(ps.RSS)/(1<<20), loadAvg())
	}
}

// waitFor polls cond every 20 ms for up to d; true if it held.
func waitFor(ctx context.Context, d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// raiseFileLimit lifts this process's RLIMIT_NOFILE soft limit to its hard
// limit (masters started after inherit it) and fails if that is below need:
// one connection per agent stream, on both ends.
func raiseFileLimit(need int) error {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return err
	}
	rl.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return err
	}
	if rl.Cur < uint64(need) {
		return fmt.Errorf("open files: the hard limit is %d, this run needs about %d (raise ulimit -Hn)", rl.Max, need)
	}
	return nil
}

func round(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return -1
	}
	return math.Round(v*1000) / 1000
}
