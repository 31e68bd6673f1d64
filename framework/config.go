package framework

import (
	"log"
	"os"
	"time"

	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/framework/dispatch"
	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/profile"
)

// Config configures an application's driver.
type Config struct {
	App string
	// Master is the Mesos master, host:port[,host:port...]. Ignored with Local.
	Master string
	// TLSCA is the PEM file of the CA that signed the masters'
	// certificates: the driver then talks to them over https and verifies
	// them. Empty: $ALLOT_TLS_CA, else plain HTTP.
	TLSCA string
	// Credential, if set, authenticates the framework to masters that
	// run with --authenticate-frameworks (sched.Config.Credential).
	Credential *auth.Credential
	// Local runs the executors inside this process (still over HTTP).
	Local bool
	// Executors is how many executors to ask for (the initial number with
	// Dynamic); Cores and MemMB size each.
	Executors, Cores, MemMB int
	// InputBytes declares the application's input size at start (0: not
	// declared). It is logged in application_start so the demand predictor
	// can learn per input size, and it is the setting a loaded predictor
	// model is asked about.
	InputBytes int64
	// DemandModel is a demand predictor model (`allot predict train`). With
	// the Mesos backend, the profile it predicts for App at Cores and
	// InputBytes is declared in the REQUEST as the application's demand
	// (Prophet's sorter places the executors by it). An application the
	// model does not know runs undeclared.
	DemandModel string
	// Profile, if set, is the executors' demand profile, declared instead
	// of DemandModel's prediction (a framework that knows its profile).
	Profile *profile.Profile
	// Placement is how the Mesos backend picks agents among the offers it
	// holds when they span more agents than it needs executors: "first"
	// (or ""; the offers' order, as before) or "prophet" (the agents whose
	// availability timelines, fetched from the master's GET /timelines,
	// score best against the declared profile by Prophet's score; see
	// framework/placement). Without a declared profile it is "first".
	Placement string
	// Backoff turns on Prophet's task backoff (backoff.go): the dispatcher
	// is wrapped in a dispatch.Backoff fed every BackoffInterval (default
	// 1s) from the master's /state usage rates; BackoffParams (nil:
	// dispatch.DefaultBackoff) are its thresholds. Mesos backend only.
	Backoff         bool
	BackoffParams   *dispatch.BackoffParams
	BackoffInterval time.Duration
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

	// Clock drives every timing decision (default RealClock).
	Clock Clock
	// Dispatcher places pending tasks on executors (default
	// dispatch.LocalityWait{Wait: LocalityWait}); wrap it to add a policy
	// such as a backoff.
	Dispatcher dispatch.Dispatcher
	// Scaling decides dynamic allocation when Dynamic is set (default
	// elastic.IdleBacklog from MinExecutors, MaxExecutors, IdleTimeout and
	// BacklogTimeout).
	Scaling elastic.Policy

	// iSpark (handoff.go, utilisation.go). MonitorEpoch is the
	// monitoring epoch: each executor's utilisation is averaged over it and
	// logged (executor_utilisation); 0 turns monitoring off.
	MonitorEpoch time.Duration
	// OthersWaiting, if set, says whether other frameworks wait for
	// resources; otherwise the Mesos backend's inverse offers say so (the
	// local backend: never). Tests and demos set it to force the signal.
	OthersWaiting func() bool
	// ForceUtilisation, when positive, replaces every measured CPU and
	// memory utilisation the scaling policy sees (a test hook: it makes a
	// scale-down deterministic). The event log keeps the measured values.
	ForceUtilisation float64
	// HandoffPause waits this long after each partition moved in a handoff,
	// or until the giver is lost (a test hook: it holds the handoff open
	// while a test kills the giver mid-handoff).
	HandoffPause time.Duration
	// AwaitScaleDown, when positive, holds each job that starts while some
	// partition is cached, up to this long, until the first iSpark
	// scale-down has been carried out (a test hook: an application whose
	// jobs are shorter than a monitoring epoch cannot finish before the
	// decision a test waits for).
	AwaitScaleDown time.Duration
	// JobGate, if set, is asked before each job with the number of jobs
	// ended so far; the job waits at its start until it answers true (a
	// test hook: a test holds an application between two jobs while it
	// acts on the cluster, instead of racing the application's speed).
	JobGate func(jobsDone int) bool
	// DemandFollowsTarget re-declares the Mesos REQUEST's task count when
	// the executor target drops, so the master stops counting executors
	// given back as demand (iSpark sets it).
	DemandFollowsTarget bool
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
	if c.Clock == nil {
		c.Clock = RealClock{}
	}
	if c.Dispatcher == nil {
		c.Dispatcher = dispatch.LocalityWait{Wait: c.LocalityWait}
	}
	rule := elastic.IdleBacklog{Min: c.MinExecutors, Max: c.MaxExecutors, IdleTimeout: c.IdleTimeout, BacklogTimeout: c.BacklogTimeout}
	if c.Scaling == nil {
		c.Scaling = rule
	}
	// iSpark without its backlog rule gets today's, from the settings above.
	if s, ok := c.Scaling.(elastic.ISpark); ok && s.Scale == (elastic.IdleBacklog{}) {
		s.Scale = rule
		c.Scaling = s
	}
}
