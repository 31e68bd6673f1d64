package sched

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/apierrors"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/tlsconf"
)

// Planner is the framework's side of the conversation: it decides what to
// launch and learns what happened. Its methods are called from the client's
// event loop, one at a time, and must not block.
type Planner interface {
	// Offers returns the launches to make on the given offers. Any offer
	// without a launch is declined at once with the refuse filter.
	Offers(offers []mesos.Offer) []Launch
	// Update reports a task status (already queued for acknowledgement).
	Update(st mesos.TaskStatus)
	// Wants says whether the framework has something to launch; while it
	// has not, the client suppresses offers.
	Wants() bool
	// Tasks lists the framework's non-terminal tasks (task id -> agent id)
	// for reconciliation after every (re)subscription.
	Tasks() map[string]string
}

// Launch is a set of tasks to launch on one offer.
type Launch struct {
	Offer mesos.OfferID
	Tasks []mesos.TaskInfo
}

// Demand is the per-task resource vector declared with REQUEST; Tasks > 0
// also declares how many such tasks are wanted (the master's "tasks" scalar).
type Demand struct {
	Resources []mesos.Resource
	Tasks     int
}

// Config configures a Client. Zero values take the defaults named.
type Config struct {
	// Masters are host:port addresses tried in turn (a follower redirects
	// to the leader; a dead master is skipped on reconnection).
	Masters []string
	// Framework is the FrameworkInfo to subscribe with. User defaults to
	// $USER (or root); FailoverTimeout, when unset, comes from the field below.
	Framework mesos.FrameworkInfo
	// FailoverTimeout is how long the master keeps the framework's tasks
	// after the connection drops (default 1 minute).
	FailoverTimeout time.Duration
	// RefuseSeconds is the filter on declined offers (default 5s).
	RefuseSeconds time.Duration
	// Demand, if set, is declared with REQUEST after each subscription.
	Demand *Demand
	// JobSize, if set, declares the framework's head job to the master's
	// size-based sorters (fsp, fspy) as FrameworkInfo labels (allot.job_*,
	// api/jobsize.go) on every subscription; DeclareJobSize replaces it.
	JobSize *api.JobSize
	// SubscribeSuppressed subscribes with the framework's role suppressed,
	// so that the master makes no offer before the REQUEST that follows
	// the subscription has declared Demand; the sync after it revives.
	// Frameworks whose demand changes how they are served set it: an
	// application demand moves a framework onto the master's gang path
	// (all E executors at once), and an offer made between SUBSCRIBED and
	// the REQUEST would otherwise be a whole agent outside the gang.
	SubscribeSuppressed bool
	// ReconcileBackoff is the first reconciliation retry delay (default
	// 1s), doubling up to ReconcileBackoffMax (default 30s).
	ReconcileBackoff, ReconcileBackoffMax time.Duration
	// ReconnectBackoffMax caps the delay between subscription attempts
	// (default 5s).
	ReconnectBackoffMax time.Duration
	// ReconnectTimeout, if set, bounds how long Run keeps re-subscribing
	// after a subscription ended (the master died, went silent for a few
	// heartbeats, or lost leadership): once no master has taken the
	// subscription this long, Run returns ErrNoMaster. Zero retries for
	// ever, as a long-running framework should.
	ReconnectTimeout time.Duration
	// FirstSubscribeTimeout, if set, bounds the first subscription: Run
	// returns the last error once none has succeeded this long after it
	// started, and at once when a master refuses the SUBSCRIBE (400, 401,
	// 403). A framework that never subscribed has no task a retry could
	// save, so a command-line client says why instead of waiting. Zero
	// retries for ever, as a long-running framework should.
	FirstSubscribeTimeout time.Duration
	// Caller builds the client for a master endpoint URL (default: mesos-go
	// httpsched over protobuf). Tests inject fakes here.
	Caller func(endpoint string) calls.Caller
	// Leader names the leading master given any master's address (default
	// with the default Caller: ask its /redirect; otherwise the address
	// itself). httpsched follows a follower's 307 for SUBSCRIBE only and
	// sends every later call to the address it was built with, where a
	// follower's 307 drops the subscription; so the client asks first.
	Leader func(ctx context.Context, master string) string
	// OnDecline, if set, is told of every DECLINE call the master
	// accepted: how many offers, the refuse filter sent with them, and how
	// long they were held (from the OFFERS event to the answer). Frameworks
	// record it so that "never hold an offer longer than needed" can be
	// checked from outside.
	OnDecline func(offers int, refuse, held time.Duration)
	// TLS, when set, makes the client speak https to the masters and verify
	// them with it (tlsconf.ClientFor builds one from a CA file). Nil: the
	// CA in $ALLOT_TLS_CA if that is set, else plain HTTP.
	TLS *tls.Config
	// Credential, if set, authenticates the framework to a master with
	// --authenticate-frameworks: the default Caller sends it as HTTP Basic
	// (mesos-go's httpcli.BasicAuth), and FrameworkInfo.principal is set
	// to its principal when empty (authn.go).
	Credential *auth.Credential
	// Logf logs the client's decisions (default: log.Printf to stderr
	// prefixed "sched: "; set to func(string, ...any){} to silence).
	Logf func(format string, args ...any)
}

func (c *Config) setDefaults() {
	if c.FailoverTimeout == 0 {
		c.FailoverTimeout = time.Minute
	}
	if c.RefuseSeconds == 0 {
		c.RefuseSeconds = 5 * time.Second
	}
	if c.ReconcileBackoff == 0 {
		c.ReconcileBackoff = time.Second
	}
	if c.ReconcileBackoffMax == 0 {
		c.ReconcileBackoffMax = 30 * time.Second
	}
	if c.ReconnectBackoffMax == 0 {
		c.ReconnectBackoffMax = 5 * time.Second
	}
	c.setCredential()
	if c.Caller == nil {
		c.Caller = HTTPCallerTLS(c.TLS)
		if c.Credential != nil {
			c.Caller = credentialCaller(*c.Credential, c.TLS)
		}
		if c.Leader == nil {
			c.Leader = AskLeaderTLS(c.TLS)
		}
	}
	if c.Leader == nil {
		c.Leader = func(_ context.Context, m string) string { return m }
	}
	if c.Logf == nil {
		l := log.New(os.Stderr, "sched: ", log.LstdFlags|log.Lmicroseconds)
		c.Logf = l.Printf
	}
	if c.Framework.User == "" {
		c.Framework.User = os.Getenv("USER")
		if c.Framework.User == "" {
			c.Framework.User = "root"
		}
	}
	if c.Framework.FailoverTimeout == nil {
		s := c.FailoverTimeout.Seconds()
		c.Framework.FailoverTimeout = &s
	}
}

// ErrRemoved is returned by Run when the master no longer knows the
// framework (torn down, or its failover timeout expired).
var ErrRemoved = errors.New("framework was removed by the master")

// Client runs one framework's subscription. Create with New, start Run in a
// goroutine, call Wake when the Planner has new work, Teardown at the end.
type Client struct {
	cfg     Config
	planner Planner

	// mu guards id, caller, suppressed, session, reported and stopping
	// (and so who closes subscribed: the SUBSCRIBED that finds id empty).
	// It is held only for those reads and writes, never across a call to
	// the master or the Planner.
	mu         sync.Mutex
	id         string
	caller     calls.Caller // the current subscription's caller (nil when disconnected)
	suppressed bool
	session    int // incremented on every SUBSCRIBED
	reported   map[string]bool
	// stopping is set by Teardown: the stream's end is then expected and
	// Run returns instead of re-subscribing.
	stopping   bool
	subscribed chan struct{} // closed at the first SUBSCRIBED

	// callMu serialises suppress/revive decisions with the calls that
	// implement them, so that Wake from another goroutine and the event
	// loop do not race each other into REVIVE, SUPPRESS in the wrong order.
	// It guards no field; it is held across those calls and takes mu
	// inside. Lock order: callMu, then mu.
	callMu sync.Mutex

	acks chan *scheduler.Call
	// reconcileDone, if set (tests), hears when a reconciliation finishes.
	reconcileDone chan struct{}
}

// New returns a client for planner.
func New(cfg Config, planner Planner) (*Client, error) {
	if len(cfg.Masters) == 0 {
		return nil, fmt.Errorf("sched: no master address: set Config.Masters (e.g. 127.0.0.1:5050)")
	}
	if planner == nil {
		return nil, fmt.Errorf("sched: nil Planner")
	}
	if cfg.TLS == nil {
		tc, err := tlsconf.ClientFor("")
		if err != nil {
			return nil, fmt.Errorf("sched: $%s: %w", tlsconf.EnvCA, err)
		}
		cfg.TLS = tc
	}
	cfg.setDefaults()
	if cfg.JobSize != nil {
		cfg.Framework.Labels = api.WithJobSize(cfg.Framework.Labels, cfg.JobSize)
	}
	return &Client{cfg: cfg, planner: planner, subscribed: make(chan struct{}), acks: make(chan *scheduler.Call, 4096), reported: map[string]bool{}}, nil
}

// ID is the framework id, "" before the first SUBSCRIBED.
func (c *Client) ID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.id
}

// Subscribed is closed when the first subscription succeeds.
func (c *Client) Subscribed() <-chan struct{} { return c.subscribed }

// Run subscribes and serves events until ctx ends, re-subscribing with the
// same framework id whenever the stream breaks. It returns ctx's error, or
// ErrRemoved if the master says the framework is gone.
func (c *Client) Run(ctx context.Context) error {
	go c.acker(ctx)
	backoff := 100 * time.Millisecond
	begun := time.Now()
	var lost reconnectClock
	for attempt := 0; ; attempt++ {
		session := c.sessionCount()
		actx, endAttempt := c.attemptContext(ctx, &lost, session)
		master := c.cfg.Leader(actx, c.cfg.Masters[attempt%len(c.cfg.Masters)])
		started := time.Now()
		err := c.serve(actx, tlsconf.URL(c.cfg.TLS != nil, master, "/api/v1/scheduler"))
		endAttempt()
		lost.ended(session != c.sessionCount())
		if errors.Is(err, context.Canceled) && ctx.Err() == nil {
			err = fmt.Errorf("master at %s did not answer within --reconnect-timeout", master)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.mu.Lock()
		stopping := c.stopping
		c.mu.Unlock()
		if stopping {
			return nil
		}
		// 403 to SUBSCRIBE with our id: the master removed the framework.
		if apierrors.CodeUnsubscribed.Matches(errors.Unwrap(err)) && strings.Contains(err.Error(), "removed") {
			return fmt.Errorf("%w: %v", ErrRemoved, err)
		}
		if errors.Is(err, ErrRemoved) {
			return err
		}
		if c.ID() == "" && c.cfg.FirstSubscribeTimeout > 0 && (refused(err) || time.Since(begun) >= c.cfg.FirstSubscribeTimeout) {
			return tlsconf.Explain(err, "master at "+master)
		}
		if c.ID() != "" && lost.expired(c.cfg.ReconnectTimeout) {
			return fmt.Errorf("%w for %v (last: %v)", ErrNoMaster, c.cfg.ReconnectTimeout, tlsconf.Explain(err, "master at "+master))
		}
		if time.Since(started) > 10*time.Second {
			backoff = 100 * time.Millisecond // the last session was healthy
		}
		c.cfg.Logf("subscription to %s ended (%v); re-subscribing as %q in %v", master, tlsconf.Explain(err, "master at "+master), c.ID(), backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		if backoff *= 2; backoff > c.cfg.ReconnectBackoffMax {
			backoff = c.cfg.ReconnectBackoffMax
		}
	}
}

// refused reports whether a master answered the SUBSCRIBE with a refusal
// that asking again cannot change: a malformed call, bad credentials, a
// framework it will not take.
func refused(err error) bool {
	inner := errors.Unwrap(err)
	for _, code := range []apierrors.Code{apierrors.CodeMalformedRequest, apierrors.CodeNotAuthenticated, apierrors.CodeUnsubscribed} {
		if code.Matches(inner) {
			return true
		}
	}
	return false
}

// serve runs one subscription until its stream ends.
func (c *Client) serve(ctx context.Context, endpoint string) error {
	caller := c.cfg.Caller(endpoint)
	c.mu.Lock()
	info := c.cfg.Framework // DeclareJobSize changes its labels under mu
	if c.id != "" {
		info.ID = &mesos.FrameworkID{Value: c.id}
	}
	c.mu.Unlock()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub := calls.Subscribe(&info)
	if info.ID != nil {
		sub.FrameworkID = info.ID
	}
	if c.cfg.SubscribeSuppressed {
		role := info.GetRole()
		if role == "" {
			role = "*"
		}
		sub.Subscribe.SuppressedRoles = []string{role}
	}
	resp, err := caller.Call(sctx, sub)
	if err != nil {
		return fmt.Errorf("SUBSCRIBE: %w", err)
	}
	go func() { <-sctx.Done(); resp.Close() }()
	defer func() {
		c.mu.Lock()
		if c.caller == caller {
			c.caller = nil
		}
		c.mu.Unlock()
	}()
	// The heartbeat watchdog: a master that stops sending anything for a few
	// heartbeat intervals is as good as gone (a half-open TCP connection
	// would otherwise keep us subscribed to nobody).
	events := make(chan *scheduler.Event)
	errc := make(chan error, 1)
	go func() {
		for {
			e := new(scheduler.Event)
			if err := resp.Decode(e); err != nil {
				errc <- err
				return
			}
			select {
			case events <- e:
			case <-sctx.Done():
				return
			}
		}
	}()
	silence := 60 * time.Second
	timer := time.NewTimer(silence)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errc:
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		case <-timer.C:
			return fmt.Errorf("no event (not even a heartbeat) for %v", silence)
		case e := <-events:
			if e.Type == scheduler.Event_SUBSCRIBED && e.Subscribed.GetHeartbeatIntervalSeconds() > 0 {
				silence = time.Duration(3*e.Subscribed.GetHeartbeatIntervalSeconds()*float64(time.Second)) + time.Second
			}
			timer.Reset(silence)
			if err := c.handle(sctx, caller, e); err != nil {
				return err
			}
		}
	}
}

// handle applies the policy to one event. It is the unit under test.
func (c *Client) handle(ctx context.Context, caller calls.Caller, e *scheduler.Event) error {
	if c.handleInverse(e) {
		return nil
	}
	switch e.Type {
	case scheduler.Event_SUBSCRIBED:
		id := e.Subscribed.FrameworkID.GetValue()
		// No sync (a Wake from another goroutine) may REVIVE between the
		// subscription and its REQUEST: with SubscribeSuppressed, offers
		// must wait until the demand is declared.
		c.callMu.Lock()
		c.mu.Lock()
		first := c.id == ""
		c.id, c.caller = id, caller
		// A fresh subscription starts as it asked, whatever the last one
		// ended in: unsuppressed, or suppressed with SubscribeSuppressed.
		c.suppressed = c.cfg.SubscribeSuppressed
		c.session++
		session := c.session
		c.mu.Unlock()
		if first {
			close(c.subscribed)
		}
		c.cfg.Logf("subscribed as framework %s", id)
		if d := c.cfg.Demand; d != nil {
			c.call(ctx, calls.Request(demandRequest(*d)))
		}
		c.callMu.Unlock()
		c.sync(ctx)
		// Reconcile the tasks known now, before this session launches
		// anything: a task launched after SUBSCRIBED may reach the master
		// after our RECONCILE and be reported TASK_LOST by mistake.
		go c.reconcile(ctx, session, c.planner.Tasks())
	case scheduler.Event_OFFERS:
		c.offers(ctx, e.Offers.Offers)
	case scheduler.Event_UPDATE:
		st := e.Update.Status
		c.mu.Lock()
		c.reported[st.TaskID.Value] = true
		c.mu.Unlock()
		if len(st.UUID) > 0 {
			ack := calls.Acknowledge(st.GetAgentID().GetValue(), st.TaskID.Value, st.UUID)
			select {
			case c.acks <- ack:
			default:
				c.call(ctx, ack) // the queue is full: acknowledge inline rather than drop
			}
		}
		c.planner.Update(st)
		c.sync(ctx)
	case scheduler.Event_RESCIND:
		// Nothing to do: offers are never held past the event that brought them.
	case scheduler.Event_ERROR:
		msg := e.Error.GetMessage()
		if strings.Contains(msg, "removed") || strings.Contains(msg, "torn down") {
			return fmt.Errorf("%w: %s", ErrRemoved, msg)
		}
		return fmt.Errorf("master error: %s", msg)
	}
	return nil
}

// offers answers a batch of offers at once: launches where the planner has
// them, one DECLINE with the refuse filter for the rest.
func (c *Client) offers(ctx context.Context, offers []mesos.Offer) {
	received := time.Now()
	used := map[string]bool{}
	launches := c.planner.Offers(offers)
	// The unused rest of an accepted offer is declined implicitly with the
	// ACCEPT's filter: while the planner still wants more, that filter is
	// zero so the rest comes straight back; otherwise the usual refusal.
	refuse := c.cfg.RefuseSeconds
	if c.planner.Wants() {
		refuse = 0
	}
	for _, l := range launches {
		if len(l.Tasks) == 0 || used[l.Offer.Value] {
			continue
		}
		used[l.Offer.Value] = true
		if err := c.call(ctx, calls.Accept(calls.OfferOperations{calls.OpLaunch(l.Tasks...)}.WithOffers(l.Offer)).With(calls.RefuseSeconds(refuse))); err != nil {
			// The launch did not happen; the planner learns through the
			// TASK_* updates reconciliation brings or by its own timeout.
			c.cfg.Logf("ACCEPT of offer %s failed: %v", l.Offer.Value, err)
			for _, t := range l.Tasks {
				msg := "ACCEPT failed: " + err.Error()
				c.planner.Update(mesos.TaskStatus{TaskID: t.TaskID, AgentID: &t.AgentID, State: mesos.TASK_ERROR.Enum(), Message: &msg, Source: mesos.SOURCE_MASTER.Enum()})
			}
		}
	}
	var decline []mesos.OfferID
	for _, o := range offers {
		if !used[o.ID.Value] {
			decline = append(decline, o.ID)
		}
	}
	if len(decline) > 0 {
		err := c.call(ctx, calls.Decline(decline...).With(calls.RefuseSeconds(c.cfg.RefuseSeconds)))
		if err == nil && c.cfg.OnDecline != nil {
			c.cfg.OnDecline(len(decline), c.cfg.RefuseSeconds, time.Since(received))
		}
	}
	c.sync(ctx)
}

// Wake tells the client the planner may want offers again (or no longer);
// it revives or suppresses accordingly. Safe from any goroutine.
func (c *Client) Wake() {
	c.sync(context.Background())
}

// sync makes the master's suppression state match planner.Wants().
func (c *Client) sync(ctx context.Context) {
	c.callMu.Lock()
	defer c.callMu.Unlock()
	want := c.planner.Wants()
	c.mu.Lock()
	suppressed, connected := c.suppressed, c.caller != nil
	c.mu.Unlock()
	if !connected {
		return
	}
	switch {
	case want && suppressed:
		if c.call(ctx, calls.Revive()) == nil {
			c.setSuppressed(false)
		}
	case !want && !suppressed:
		if c.call(ctx, calls.Suppress()) == nil {
			c.setSuppressed(true)
		}
	}
}

func (c *Client) setSuppressed(v bool) {
	c.mu.Lock()
	c.suppressed = v
	c.mu.Unlock()
}

// Suppressed reports whether offers are currently suppressed.
func (c *Client) Suppressed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.suppressed
}

// Call sends a call for this framework on the current subscription.
func (c *Client) Call(ctx context.Context, call *scheduler.Call) error {
	return c.call(ctx, call)
}

func (c *Client) call(ctx context.Context, call *scheduler.Call) error {
	c.mu.Lock()
	caller, id := c.caller, c.id
	c.mu.Unlock()
	if caller == nil {
		return fmt.Errorf("%s: not subscribed", call.Type)
	}
	call.FrameworkID = &mesos.FrameworkID{Value: id}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err := calls.CallNoData(cctx, caller, call)
	if err != nil && call.Type != scheduler.Call_ACKNOWLEDGE {
		c.cfg.Logf("%s failed: %v", call.Type, err)
	}
	return err
}

// DeclareJobSize declares a new head job (or a new size for the same
// job: a prediction that arrived) with UPDATE_FRAMEWORK, its labels
// replaced by js's (nil removes them, which the master takes as "no
// change"). Later re-subscriptions carry the new labels, so a failover
// neither restarts nor undoes the declaration. Not while disconnected:
// the master must have it, or the caller would believe a declaration the
// master never saw.
func (c *Client) DeclareJobSize(ctx context.Context, js *api.JobSize) error {
	c.mu.Lock()
	info := c.cfg.Framework
	info.Labels = api.WithJobSize(info.Labels, js)
	info.ID = &mesos.FrameworkID{Value: c.id}
	c.mu.Unlock()
	if err := c.call(ctx, calls.UpdateFramework(info)); err != nil {
		return err
	}
	c.mu.Lock()
	c.cfg.Framework.Labels = info.Labels
	c.mu.Unlock()
	return nil
}

// Kill asks the master to kill a task.
func (c *Client) Kill(taskID, agentID string) error {
	return c.call(context.Background(), calls.Kill(taskID, agentID))
}

// Teardown removes the framework: the master kills its tasks and executors.
func (c *Client) Teardown() error {
	c.mu.Lock()
	c.stopping = true
	c.mu.Unlock()
	return c.call(context.Background(), &scheduler.Call{Type: scheduler.Call_TEARDOWN})
}
