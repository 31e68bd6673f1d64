package scalebench

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

const agentPath = "/api/v1/allot/agent"

// agentPool is every simulated agent, the HTTP client they share and what
// they measure.
type agentPool struct {
	cfg    Config
	hc     *http.Client // one Transport for every agent stream and call
	leader *leaderHint
	st     *stats
	agents []*simAgent
	sends  chan *update
	wg     sync.WaitGroup
	// admit bounds the REGISTER calls in flight, so that the first burst of
	// N agents reaches the master as a queue rather than N connects at once.
	admit chan struct{}
}

// simAgent is one agent: an id the master gave it, its tasks, the master
// it registered with.
type simAgent struct {
	p        *agentPool
	idx      int
	mu       sync.Mutex
	id       string
	master   string // "" while not registered
	tasks    map[string]*simTask
	lastReg  atomic.Int64 // unix ns of the last REGISTERED
	everRegd atomic.Bool
	lastPost atomic.Int64 // unix ns of the last call the master took
}

// simTask is a launched task the agent "runs" until its timer fires.
type simTask struct {
	fw    string
	info  []byte
	state mesos.TaskState
	timer *time.Timer
}

// update is one status update on its way to the master.
type update struct {
	a      *simAgent
	fw     string
	status mesos.TaskStatus
	tries  int
}

func newAgentPool(cfg Config, leader *leaderHint, st *stats) *agentPool {
	tr := &http.Transport{MaxIdleConns: 4096, MaxIdleConnsPerHost: 4096, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true, ReadBufferSize: 4096, WriteBufferSize: 4096}
	hc := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	p := &agentPool{cfg: cfg, hc: hc, leader: leader, st: st, sends: make(chan *update, 1<<16), admit: make(chan struct{}, 256)}
	for i := 0; i < cfg.Agents; i++ {
		p.agents = append(p.agents, &simAgent{p: p, idx: i, tasks: map[string]*simTask{}})
	}
	return p
}

// start runs every agent and the status update senders until ctx ends.
func (p *agentPool) start(ctx context.Context) {
	for i := 0; i < 128; i++ {
		p.wg.Add(1)
		go func() { defer p.wg.Done(); p.sender(ctx) }()
	}
	for _, a := range p.agents {
		p.wg.Add(1)
		go func() { defer p.wg.Done(); a.run(ctx) }()
	}
}

func (p *agentPool) wait() { p.wg.Wait(); p.hc.Transport.(*http.Transport).CloseIdleConnections() }

// registeredSince counts agents whose last registration is after t.
func (p *agentPool) registeredSince(t time.Time) int {
	n := 0
	for _, a := range p.agents {
		if a.lastReg.Load() > t.UnixNano() {
			n++
		}
	}
	return n
}

// run keeps the agent registered: one session at a time with the master
// the shared hint names, backing off (with jitter) while none accepts it.
func (a *simAgent) run(ctx context.Context) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		addr := a.p.leader.get(ctx)
		start := time.Now()
		err := a.session(ctx, addr)
		if ctx.Err() != nil {
			return
		}
		var re redirectError
		if errors.As(err, &re) {
			a.p.leader.set(string(re))
			continue
		}
		a.p.leader.stale(addr)
		if time.Since(start) > 10*time.Second {
			backoff = 100 * time.Millisecond
		}
		d := backoff/2 + rand.N(backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

type redirectError string

func (e redirectError) Error() string { return "redirected to " + string(e) }

// session registers at addr and serves the event stream until it ends.
func (a *simAgent) session(ctx context.Context, addr string) error {
	select {
	case a.p.admit <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	admitted := true
	release := func() {
		if admitted {
			admitted = false
			<-a.p.admit
		}
	}
	defer release()
	resp, err := a.register(ctx, addr)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The master pings every 5 s; three silent intervals mean it is gone.
	watchdog := time.AfterFunc(15*time.Second, cancel)
	defer watchdog.Stop()
	go func() { <-sctx.Done(); resp.Body.Close() }()
	br := bufio.NewReaderSize(resp.Body, 4096)
	for {
		frame, err := readFrame(br)
		if err != nil {
			a.disconnected()
			return err
		}
		watchdog.Reset(15 * time.Second)
		var ev api.AgentEvent
		if err := proto.Unmarshal(frame, &ev); err != nil {
			a.disconnected()
			return fmt.Errorf("bad event: %w", err)
		}
		if ev.Type == api.AgentEventType_REGISTERED {
			release()
			a.registered(addr, ev.AgentId)
			continue
		}
		a.handle(&ev)
	}
}

// register POSTs REGISTER with the tasks the agent still has.
func (a *simAgent) register(ctx context.Context, addr string) (*http.Response, error) {
	a.mu.Lock()
	call := &api.AgentCall{Type: api.AgentCallType_REGISTER, AgentId: a.id, Agent: &api.AgentRecord{Id: a.id,
		Hostname: "sim-agent-" + strconv.Itoa(a.idx), Address: "127.0.0.1:5051", Resources: a.p.cfg.AgentResources}}
	for id, t := range a.tasks {
		call.Tasks = append(call.Tasks, &api.TaskRecord{FrameworkId: t.fw, TaskId: id, AgentId: a.id, Info: t.info, State: int32(t.state)})
	}
	a.mu.Unlock()
	body, _ := proto.Marshal(call)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+agentPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", api.MediaProtobuf)
	req.Header.Set("Accept", api.MediaProtobuf)
	resp, err := a.p.hc.Do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return resp, nil
	case http.StatusTemporaryRedirect:
		resp.Body.Close()
		loc := strings.TrimPrefix(resp.Header.Get("Location"), "//")
		if i := strings.IndexByte(loc, '/'); i >= 0 {
			loc = loc[:i]
		}
		return nil, redirectError(loc)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	return nil, fmt.Errorf("REGISTER answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
}

func (a *simAgent) registered(addr, id string) {
	a.mu.Lock()
	a.id, a.master = id, addr
	a.mu.Unlock()
	a.lastReg.Store(time.Now().UnixNano())
	if !a.everRegd.Swap(true) {
		a.p.st.registered.Add(1)
	}
}

func (a *simAgent) disconnected() {
	a.mu.Lock()
	a.master = ""
	a.mu.Unlock()
}

// handle applies one command from the master.
func (a *simAgent) handle(ev *api.AgentEvent) {
	switch ev.Type {
	case api.AgentEventType_PING:
		// The master marks an agent it has not heard from for its
		// --agent-ping-timeout unreachable: an idle agent answers, as the
		// real one does.
		if time.Since(time.Unix(0, a.lastPost.Load())) > 10*time.Second {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				a.p.post(ctx, a, nil)
			}()
		}
	case api.AgentEventType_RUN:
		var ti mesos.TaskInfo
		if ti.Unmarshal(ev.Task) != nil {
			return
		}
		a.launch(ev.FrameworkId, &ti, ev.Task)
	case api.AgentEventType_KILL:
		a.finish(ev.FrameworkId, ev.TaskId, mesos.TASK_KILLED)
	case api.AgentEventType_ACKNOWLEDGE:
		a.acknowledged(ev.TaskId)
	case api.AgentEventType_SHUTDOWN_FRAMEWORK:
		a.mu.Lock()
		for id, t := range a.tasks {
			if t.fw == ev.FrameworkId {
				t.timer.Stop()
				delete(a.tasks, id)
			}
		}
		a.mu.Unlock()
	}
}

// launch "starts" a task: TASK_RUNNING now, TASK_FINISHED after a drawn
// duration.
func (a *simAgent) launch(fw string, ti *mesos.TaskInfo, raw []byte) {
	id := ti.TaskID.Value
	cfg := a.p.cfg
	d := cfg.TaskMin + rand.N(cfg.TaskMax-cfg.TaskMin+1)
	a.mu.Lock()
	if _, dup := a.tasks[id]; dup {
		a.mu.Unlock()
		return
	}
	t := &simTask{fw: fw, info: raw, state: mesos.TASK_RUNNING}
	a.tasks[id] = t
	t.timer = time.AfterFunc(d, func() { a.finish(fw, id, mesos.TASK_FINISHED) })
	a.mu.Unlock()
	a.p.st.launchedOnAgents.Add(1)
	a.send(fw, id, mesos.TASK_RUNNING)
}

// finish moves a running task to a terminal state and reports it.
func (a *simAgent) finish(fw, id string, state mesos.TaskState) {
	a.mu.Lock()
	t := a.tasks[id]
	if t == nil || t.state != mesos.TASK_RUNNING {
		a.mu.Unlock()
		return
	}
	t.timer.Stop()
	t.state = state
	a.mu.Unlock()
	a.send(fw, id, state)
}

// acknowledged forgets a task whose terminal update the framework took.
func (a *simAgent) acknowledged(id string) {
	a.mu.Lock()
	if t := a.tasks[id]; t != nil && t.state != mesos.TASK_RUNNING {
		delete(a.tasks, id)
	}
	a.mu.Unlock()
}

func (a *simAgent) send(fw, id string, state mesos.TaskState) {
	uuid := make([]byte, 16)
	crand.Read(uuid)
	now := float64(time.Now().UnixNano()) / 1e9
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: id}, State: state.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(),
		UUID: uuid, Timestamp: &now}
	a.p.st.sent.Store(statusKey(id, state), time.Now())
	a.p.enqueue(&update{a: a, fw: fw, status: st})
}

func (p *agentPool) enqueue(u *update) {
	select {
	case p.sends <- u:
	default:
		time.AfterFunc(100*time.Millisecond, func() { p.enqueue(u) })
	}
}

// sender posts status updates to each agent's master; a failed post is
// retried (for up to a minute), as an agent retries until acknowledged.
// Whatever else is queued goes along, one AGENT_BATCH per agent, as the
// real agent batches: with one round trip per update the harness, not the
// master, limited the update rate.
func (p *agentPool) sender(ctx context.Context) {
	for {
		var u *update
		select {
		case <-ctx.Done():
			return
		case u = <-p.sends:
		}
		byAgent := map[*simAgent][]*update{u.a: {u}}
		for more := true; more && len(byAgent) < 64; {
			select {
			case v := <-p.sends:
				byAgent[v.a] = append(byAgent[v.a], v)
			default:
				more = false
			}
		}
		for a, us := range byAgent {
			if err := p.post(ctx, a, us); err != nil && ctx.Err() == nil {
				for _, u := range us {
					if u.tries++; u.tries < 120 {
						time.AfterFunc(500*time.Millisecond, func() { p.enqueue(u) })
					}
				}
			}
		}
	}
}

func (p *agentPool) post(ctx context.Context, a *simAgent, us []*update) error {
	a.mu.Lock()
	master, id := a.master, a.id
	a.mu.Unlock()
	if master == "" {
		return errors.New("not registered")
	}
	call := &api.AgentCall{Type: api.AgentCallType_AGENT_BATCH, AgentId: id}
	for _, u := range us {
		stb, _ := u.status.Marshal()
		call.Batch = append(call.Batch, &api.AgentCall{Type: api.AgentCallType_STATUS_UPDATE, AgentId: id, FrameworkId: u.fw, Status: stb})
	}
	if len(call.Batch) == 1 {
		call = call.Batch[0]
	}
	body, _ := proto.Marshal(call)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+master+agentPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", api.MediaProtobuf)
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("STATUS_UPDATE answered %s", resp.Status)
	}
	a.lastPost.Store(time.Now().UnixNano())
	return nil
}

func statusKey(id string, s mesos.TaskState) string { return id + "/" + s.String() }

// readFrame reads one RecordIO frame.
func readFrame(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || n < 0 || n > 64<<20 {
		return nil, fmt.Errorf("bad RecordIO length %q", line)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(br, b)
	return b, err
}

// leaderHint is the leader's address as the agents last learned it,
// shared so that a failover costs a few /redirect lookups, not one per
// agent.
type leaderHint struct {
	hc      *http.Client
	masters []string
	mu      sync.Mutex
	addr    string
	checked time.Time
}

// get returns the hinted leader, asking the masters (at most every 200 ms)
// while there is none.
func (h *leaderHint) get(ctx context.Context) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.addr != "" {
		return h.addr
	}
	if len(h.masters) == 1 {
		return h.masters[0]
	}
	for h.addr == "" && ctx.Err() == nil {
		if wait := 200*time.Millisecond - time.Since(h.checked); wait > 0 {
			time.Sleep(wait)
		}
		h.checked = time.Now()
		for _, m := range h.masters {
			if l := askLeader(h.hc, m); l != "" {
				h.addr = l
				break
			}
		}
	}
	if h.addr == "" {
		return h.masters[0]
	}
	return h.addr
}

func (h *leaderHint) set(addr string) {
	h.mu.Lock()
	h.addr = addr
	h.mu.Unlock()
}

// stale drops the hint if it still names addr (that master failed us).
func (h *leaderHint) stale(addr string) {
	h.mu.Lock()
	if h.addr == addr {
		h.addr = ""
	}
	h.mu.Unlock()
}
