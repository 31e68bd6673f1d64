package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/master"
)

// raftProxy stands between the masters' raft ports: master i advertises
// 127.0.0.1:P_i (the proxy) and binds 127.0.0.(11+i):Q_i, and dials its
// peers from that IP, so the proxy knows which master each connection comes
// from. isolate cuts one master off from the others in both directions,
// which is a network partition as raft sees it, while its HTTP port stays
// reachable by clients.
type raftProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	down   bool            // refuse everything to this master
	banned map[string]bool // source IPs refused
	conns  map[net.Conn]string
}

func newRaftProxy(t testing.TB, target string) *raftProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &raftProxy{ln: ln, target: target, banned: map[string]bool{}, conns: map[net.Conn]string{}}
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.cut(func(string) bool { return true }) })
	return p
}

func (p *raftProxy) addr() string { return p.ln.Addr().String() }

func (p *raftProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		src := c.RemoteAddr().(*net.TCPAddr).IP.String()
		p.mu.Lock()
		refuse := p.down || p.banned[src]
		p.mu.Unlock()
		if refuse {
			c.Close()
			continue
		}
		go p.pipe(c, src)
	}
}

func (p *raftProxy) pipe(c net.Conn, src string) {
	u, err := net.DialTimeout("tcp", p.target, 2*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[u] = src, src
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(u, c); done <- struct{}{} }()
	go func() { io.Copy(c, u); done <- struct{}{} }()
	<-done
	c.Close()
	u.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, u)
	p.mu.Unlock()
}

// cut closes the live connections whose source matches.
func (p *raftProxy) cut(match func(src string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, src := range p.conns {
		if match(src) {
			c.Close()
		}
	}
}

// mnode is one master process of an mcluster.
type mnode struct {
	http, raft, bind, bindIP, dir string
	proxy                         *raftProxy
	p                             *testcluster.Proc
}

// mcluster is several masters in a raft cluster, agents that know all of
// them, and the proxies between the masters' raft ports.
type mcluster struct {
	t       testing.TB
	dir     string
	masters []*mnode
	agents  []*testcluster.Agent
	flags   []string
}

func newMCluster(t testing.TB, n, agents int, flags ...string) *mcluster {
	t.Helper()
	dir := t.TempDir()
	c := &mcluster{t: t, dir: dir, flags: flags}
	// Registered first so it runs last, after the agents' own cleanups:
	// their executors are killed, then the cgroups they leave are removed,
	// as testcluster.New does (without it every run left empty cgroups).
	t.Cleanup(func() {
		testcluster.KillSandboxProcesses(dir)
		for _, a := range c.agents {
			testcluster.RemoveAgentCgroups(a.Dir)
		}
	})
	for i := 0; i < n; i++ {
		c.masters = append(c.masters, c.newNode(i))
	}
	for i := range c.masters {
		c.startMaster(i, c.peers())
	}
	c.leader(30 * time.Second)
	for i := 0; i < agents; i++ {
		c.addAgent("cpus:2;mem:2048;disk:10000;ports:[31000-32000]")
	}
	c.waitAgents(agents)
	return c
}

func (c *mcluster) newNode(i int) *mnode {
	ip := "127.0.0." + strconv.Itoa(11+i)
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		c.t.Fatalf("binding %s (loopback aliases are needed for the raft proxy): %v", ip, err)
	}
	bind := l.Addr().String()
	l.Close()
	m := &mnode{http: testcluster.FreePort(c.t), bind: bind, bindIP: ip, dir: filepath.Join(c.dir, "master"+strconv.Itoa(i))}
	m.proxy = newRaftProxy(c.t, bind)
	m.raft = m.proxy.addr()
	return m
}

// peers is the --peers value naming every master.
func (c *mcluster) peers() string {
	var ps []string
	for _, m := range c.masters {
		if m != nil {
			ps = append(ps, m.raft+"="+m.http)
		}
	}
	return strings.Join(ps, ",")
}

// seeds is the agents' --master value.
func (c *mcluster) seeds() []string {
	var out []string
	for _, m := range c.masters {
		if m != nil {
			out = append(out, m.http)
		}
	}
	return out
}

func (c *mcluster) startMaster(i int, peers string) {
	m := c.masters[i]
	flags := append([]string{"--raft-addr", m.raft, "--raft-bind", m.bind, "--work-dir", m.dir,
		"--agent-reregister-timeout", "20s", "--raft-multiplier", "1", "--log-level", "debug"}, c.flags...)
	if peers != "" {
		flags = append(flags, "--peers", peers)
	}
	m.p = testcluster.StartMaster(c.t, "master-"+m.http, allotBin, m.http, flags...)
}

func (c *mcluster) alive(i int) bool {
	m := c.masters[i]
	return m != nil && m.p != nil && !m.p.Exited()
}

var noRedirect = &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// serving reports whether master i answers /state itself (it leads and
// has rebuilt its state), and where it redirects otherwise.
func (c *mcluster) serving(i int) (bool, string) {
	resp, err := noRedirect.Get("http://" + c.masters[i].http + "/state")
	if err != nil {
		return false, ""
	}
	defer resp.Body.Close()
	// A follower forwards /state to the leader and names it in
	// ForwardedHeader; with --redirect it answers 307 and names it in
	// Location.
	if l := resp.Header.Get(master.ForwardedHeader); l != "" {
		return false, "//" + l + "/state"
	}
	return resp.StatusCode == 200, resp.Header.Get("Location")
}

// leader waits until exactly one live master serves and every other live
// master forwards (or redirects) to it; it returns that master's index.
func (c *mcluster) leader(timeout time.Duration) int {
	c.t.Helper()
	lead := -1
	testcluster.WaitFor(c.t, timeout, "one leading master, the others redirecting to it", func() bool {
		lead = -1
		var locs []string
		for i := range c.masters {
			if !c.alive(i) {
				continue
			}
			ok, loc := c.serving(i)
			if ok {
				if lead >= 0 {
					return false
				}
				lead = i
			} else {
				locs = append(locs, loc)
			}
		}
		if lead < 0 {
			return false
		}
		for _, l := range locs {
			if l != "//"+c.masters[lead].http+"/state" {
				return false
			}
		}
		return true
	})
	return lead
}

func (c *mcluster) addAgent(res string) *testcluster.Agent {
	return c.addAgentVia(res, c.seeds())
}

// addAgentVia starts an agent that knows only the masters in seeds.
func (c *mcluster) addAgentVia(res string, seeds []string) *testcluster.Agent {
	i := len(c.agents)
	a := &testcluster.Agent{Addr: testcluster.FreePort(c.t), Dir: filepath.Join(c.dir, "agent"+strconv.Itoa(i)), Resources: res}
	c.agents = append(c.agents, a)
	testcluster.StartAgent(c.t, allotBin, strings.Join(seeds, ","), a, agentFlags...)
	return a
}

// state fetches the leader's /state.
func (c *mcluster) state() operator.State {
	var st operator.State
	lead := c.leader(30 * time.Second)
	resp, err := http.Get("http://" + c.masters[lead].http + "/state")
	if err != nil {
		return st
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&st)
	return st
}

func (c *mcluster) waitAgents(n int) {
	c.t.Helper()
	testcluster.WaitFor(c.t, 30*time.Second, fmt.Sprintf("%d active agents on the leader", n), func() bool {
		active := 0
		for _, s := range c.state().Slaves {
			if s.Active {
				active++
			}
		}
		return active == n
	})
}

// checkInvariants: no agent is allocated beyond its capacity, every task id
// is known once, and at most one sandbox ran each task.
func (c *mcluster) checkInvariants() {
	c.t.Helper()
	st := c.state()
	for _, s := range st.Slaves {
		for k, used := range s.Used {
			if total, ok := s.Resources[k]; ok && used > total+1e-9 {
				c.t.Errorf("agent %s: %s used %.3f of %.3f", s.ID, k, used, total)
			}
		}
	}
	seen := map[string]bool{}
	for _, fw := range st.Frameworks {
		// A task is live or completed, never both (test task ids are
		// never reused).
		for _, tk := range append(fw.Tasks, fw.CompletedTasks...) {
			if seen[fw.ID+"/"+tk.ID] {
				c.t.Errorf("task %s of %s listed twice", tk.ID, fw.ID)
			}
			seen[fw.ID+"/"+tk.ID] = true
		}
	}
	runs, _ := filepath.Glob(filepath.Join(c.dir, "agent*", "slaves", "*", "frameworks", "*", "executors", "*", "runs", "*"))
	perExec := map[string]int{}
	for _, r := range runs {
		if filepath.Base(r) == "latest" {
			continue
		}
		perExec[filepath.Base(filepath.Dir(filepath.Dir(r)))]++
	}
	for ex, n := range perExec {
		if n > 1 {
			c.t.Errorf("executor %s ran %d times", ex, n)
		}
	}
}

// kill9 kills master i with SIGKILL and returns once it is gone.
func (c *mcluster) kill9(i int) {
	c.masters[i].p.Kill(syscall.SIGKILL)
}

// isolate cuts master i's raft traffic in both directions; heal restores it.
func (c *mcluster) isolate(i int, on bool) {
	ip := c.masters[i].bindIP
	for j, m := range c.masters {
		if m == nil {
			continue
		}
		m.proxy.mu.Lock()
		if j == i {
			m.proxy.down = on
		} else {
			m.proxy.banned[ip] = on
		}
		m.proxy.mu.Unlock()
		if on {
			if j == i {
				m.proxy.cut(func(string) bool { return true })
			} else {
				m.proxy.cut(func(src string) bool { return src == ip })
			}
		}
	}
}

// rsched is a framework that survives master failover the way a careful
// mesos-go framework does: httpsched follows the 307 from any master to the
// leader; when the stream ends it re-subscribes with its framework id,
// trying each master address in turn. It launches one short task per offer
// while launching is on, and records every task it ever launched and the
// latest state it heard for each.
type rsched struct {
	t     testing.TB
	seeds []string
	info  mesos.FrameworkInfo
	cmd   string
	// direct: build the caller for the next seed as is, without asking
	// /redirect for the leader first (a master forwards to the leader).
	direct bool

	mu        sync.Mutex
	ids       []string // every framework id SUBSCRIBED gave (must be one)
	launching bool
	launched  []string
	latest    map[string]mesos.TaskState
	agentOf   map[string]string
	offerAt   []time.Time // when each OFFERS event arrived
	subAt     []time.Time
	next      int
	caller    calls.Caller    // of the current subscription
	sent      map[string]bool // tasks whose ACCEPT call has returned

	cancel context.CancelFunc
	ended  chan struct{}
}

func startRSched(t testing.TB, seeds []string, cmd string) *rsched {
	return startRSchedVia(t, seeds, cmd, false)
}

func startRSchedVia(t testing.TB, seeds []string, cmd string, direct bool) *rsched {
	ft := 120.0
	s := &rsched{t: t, seeds: seeds, cmd: cmd, direct: direct, latest: map[string]mesos.TaskState{}, sent: map[string]bool{}, agentOf: map[string]string{}, ended: make(chan struct{}),
		info: mesos.FrameworkInfo{Name: "failover-test", User: "root", FailoverTimeout: &ft}}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.run(ctx)
	t.Cleanup(func() { s.cancel(); <-s.ended })
	testcluster.WaitFor(t, 30*time.Second, "the framework to subscribe", func() bool { return s.id() != "" })
	return s
}

func (s *rsched) id() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) == 0 {
		return ""
	}
	return s.ids[len(s.ids)-1]
}

// reconcileLoop asks every second about the tasks not known to be done,
// as frameworks do after a failover: a new leader answers only once the
// task's agent has re-registered.
func (s *rsched) reconcileLoop(ctx context.Context) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		caller := s.caller
		s.mu.Unlock()
		if caller != nil {
			s.reconcile(ctx, caller)
		}
	}
}

func (s *rsched) reconcile(ctx context.Context, caller calls.Caller) {
	s.mu.Lock()
	var ids []scheduler.Call_Reconcile_Task
	for _, id := range s.launched {
		if st, ok := s.latest[id]; s.sent[id] && (!ok || !taskstate.IsTerminal(st)) {
			ids = append(ids, scheduler.Call_Reconcile_Task{TaskID: mesos.TaskID{Value: id}, AgentID: &mesos.AgentID{Value: s.agentOf[id]}})
		}
	}
	fwID := ""
	if len(s.ids) > 0 {
		fwID = s.ids[len(s.ids)-1]
	}
	s.mu.Unlock()
	if len(ids) == 0 || fwID == "" {
		return
	}
	rc := &scheduler.Call{Type: scheduler.Call_RECONCILE, FrameworkID: &mesos.FrameworkID{Value: fwID},
		Reconcile: &scheduler.Call_Reconcile{Tasks: ids}}
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	calls.CallNoData(cctx, caller, rc)
}

func (s *rsched) run(ctx context.Context) {
	defer close(s.ended)
	go s.reconcileLoop(ctx)
	for i := 0; ctx.Err() == nil; i++ {
		// httpsched follows a 307 for SUBSCRIBE only: its later calls go to
		// the address it was built with, and a follower's 307 there drops
		// the subscription. So ask /redirect which master leads and build
		// the caller for that one, as a careful framework does.
		addr := s.seeds[i%len(s.seeds)]
		if s.direct {
			// no lookup: the master at addr forwards to the leader
		} else if resp, err := noRedirect.Get("http://" + addr + "/redirect"); err == nil {
			if loc := strings.TrimPrefix(resp.Header.Get("Location"), "//"); resp.StatusCode == http.StatusTemporaryRedirect && loc != "" {
				addr = loc
			}
			resp.Body.Close()
		}
		// One redirect hop at most: httpsched retries a failed SUBSCRIBE on
		// the same address with growing backoff, which after a failover is
		// often the dead leader; better to fail fast and ask a seed again.
		caller := httpsched.NewCaller(httpcli.New(
			httpcli.Endpoint("http://"+addr+"/api/v1/scheduler"),
			httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
			httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second))),
		), httpsched.MaxRedirects(1))
		info := s.info
		if id := s.id(); id != "" {
			info.ID = &mesos.FrameworkID{Value: id}
		}
		t0 := time.Now()
		resp, err := caller.Call(ctx, calls.Subscribe(&info))
		if os.Getenv("ALLOT_FAILOVER_TRACE") != "" {
			s.t.Logf("%s SUBSCRIBE via %s: %v after %v", time.Now().Format("15:04:05.000"), addr, err, time.Since(t0))
		}
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond): // client backoff, not a test wait
			}
			continue
		}
		for {
			var e scheduler.Event
			if err := resp.Decode(&e); err != nil {
				if os.Getenv("ALLOT_FAILOVER_TRACE") != "" {
					s.t.Logf("%s stream ended: %v", time.Now().Format("15:04:05.000"), err)
				}
				break
			}
			if os.Getenv("ALLOT_FAILOVER_TRACE") != "" && e.Type != scheduler.Event_OFFERS && e.Type != scheduler.Event_UPDATE {
				s.t.Logf("%s event %s %v", time.Now().Format("15:04:05.000"), e.Type, e.Error)
			}
			s.handle(ctx, caller, &e)
		}
		resp.Close()
	}
}

func (s *rsched) handle(ctx context.Context, caller calls.Caller, e *scheduler.Event) {
	call := func(c *scheduler.Call) error {
		c.FrameworkID = &mesos.FrameworkID{Value: s.id()}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := calls.CallNoData(cctx, caller, c)
		if err != nil && os.Getenv("ALLOT_FAILOVER_TRACE") != "" {
			s.t.Logf("%s %s: %v", time.Now().Format("15:04:05.000"), c.Type, err)
		}
		return err
	}
	switch e.Type {
	case scheduler.Event_SUBSCRIBED:
		s.mu.Lock()
		if id := e.Subscribed.FrameworkID.Value; len(s.ids) == 0 || s.ids[len(s.ids)-1] != id {
			s.ids = append(s.ids, id)
		}
		s.subAt = append(s.subAt, time.Now())
		s.caller = caller
		s.mu.Unlock()
		// Ask the new leader about every task not known to be done.
		s.reconcile(ctx, caller)
	case scheduler.Event_OFFERS:
		s.mu.Lock()
		s.offerAt = append(s.offerAt, time.Now())
		launching := s.launching
		s.mu.Unlock()
		for _, o := range e.Offers.Offers {
			if !launching {
				call(calls.Decline(o.ID))
				continue
			}
			s.mu.Lock()
			s.next++
			id := fmt.Sprintf("t-%05d", s.next)
			s.launched = append(s.launched, id)
			s.agentOf[id] = o.AgentID.Value
			s.mu.Unlock()
			call(calls.Accept(calls.OfferOperations{calls.OpLaunch(cmdTask(id, o, s.cmd, 0.2, 32))}.WithOffers(o.ID)))
			s.mu.Lock()
			s.sent[id] = true
			s.mu.Unlock()
		}
	case scheduler.Event_UPDATE:
		st := e.Update.Status
		s.mu.Lock()
		id := st.TaskID.Value
		prev, had := s.latest[id]
		// A terminal state is final: a later reconciliation answer of LOST
		// for a task the master has already forgotten does not change it.
		if !had || !taskstate.IsTerminal(prev) {
			s.latest[id] = st.GetState()
		} else if prev == mesos.TASK_LOST && st.GetState() != mesos.TASK_LOST {
			s.t.Errorf("task %s was reported lost, then %s", id, st.GetState())
		}
		if st.GetState() == mesos.TASK_LOST {
			s.t.Logf("task %s lost: %s (%s)", id, st.GetMessage(), st.GetReason())
		}
		if a := st.GetAgentID().GetValue(); a != "" && s.agentOf[id] != "" && a != s.agentOf[id] {
			s.t.Errorf("task %s reported on agent %s, launched on %s", id, a, s.agentOf[id])
		}
		s.mu.Unlock()
		if len(st.UUID) > 0 {
			call(calls.Acknowledge(st.GetAgentID().GetValue(), id, st.UUID))
		}
	}
}

func (s *rsched) setLaunching(on bool) {
	s.mu.Lock()
	s.launching = on
	s.mu.Unlock()
}

func (s *rsched) launchedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.launched)
}

// unaccounted lists launched tasks with no state at all, or (when
// wantDone) not yet terminal.
func (s *rsched) unaccounted(wantDone bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.launched {
		st, ok := s.latest[id]
		if !ok || (wantDone && !taskstate.IsTerminal(st)) {
			out = append(out, id)
		}
	}
	return out
}

func (s *rsched) lost() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, id := range s.launched {
		if s.latest[id] == mesos.TASK_LOST {
			out = append(out, id)
		}
	}
	return out
}

func (s *rsched) checkStableID(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ids) != 1 {
		t.Errorf("framework ids over the test: %v (want one)", s.ids)
	}
}

func (s *rsched) summary() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := map[string]int{}
	for _, id := range s.launched {
		st, ok := s.latest[id]
		if !ok {
			n["none"]++
		} else {
			n[st.String()]++
		}
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%d ", k, n[k])
	}
	return fmt.Sprintf("%d launched: %s", len(s.launched), b.String())
}

// kill -9 the leader while a framework launches short tasks: a new leader
// takes over, the framework re-subscribes with the same id through the 307,
// and every task it launched ends up finished or reported lost.
func TestRaftLeaderKill9(t *testing.T) {
	c := newMCluster(t, 3, 2)
	fw := startRSched(t, c.seeds(), "sleep 0.3")
	fw.setLaunching(true)
	testcluster.WaitFor(t, 30*time.Second, "10 tasks launched", func() bool { return fw.launchedCount() >= 10 })
	old := c.leader(10 * time.Second)
	before := fw.launchedCount()
	c.kill9(old)
	lead := c.leader(30 * time.Second)
	if lead == old {
		t.Fatalf("master %d still leads after kill -9", old)
	}
	for _, name := range []string{"allot_master_is_leader", "allot_master_leader_elections_total", "allot_master_registry_records"} {
		if v := c.metric(lead, name); v < 1 {
			t.Errorf("new leader: %s = %v, want >= 1", name, v)
		}
	}
	if v := c.metric(lead, "allot_master_raft_state"); v != 2 {
		t.Errorf("new leader: allot_master_raft_state = %v, want 2 (leader)", v)
	}
	testcluster.WaitFor(t, 30*time.Second, "10 more tasks launched under the new leader", func() bool { return fw.launchedCount() >= before+10 })
	fw.setLaunching(false)
	testcluster.WaitFor(t, 60*time.Second, "every launched task to be finished or reported lost", func() bool {
		return len(fw.unaccounted(true)) == 0
	})
	t.Logf("framework: %s", fw.summary())
	for _, id := range fw.lost() {
		runs, _ := filepath.Glob(filepath.Join(c.dir, "agent*", "slaves", "*", "frameworks", "*", "executors", id, "runs", "*"))
		// No agent died, so a task reported lost must never have run: the
		// old leader took its ACCEPT but died before the launch reached
		// the agent or the registry.
		if len(runs) > 0 {
			t.Errorf("task %s was reported lost but ran: %v", id, runs)
		}
	}
	fw.checkStableID(t)
	c.waitAgents(2)
	c.checkInvariants()
	if t.Failed() {
		t.Logf("unaccounted: %v", fw.unaccounted(true))
	}
}

// registry returns master i's registry as snapshot bytes (deterministic
// for equal registries).
func (c *mcluster) registry(i int) []byte {
	resp, err := http.Get("http://" + c.masters[i].http + "/api/v1/allot/snapshot")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

// sameHistory waits until every live master holds the leader's registry.
func (c *mcluster) sameHistory() {
	c.t.Helper()
	lead := c.leader(30 * time.Second)
	testcluster.WaitFor(c.t, 30*time.Second, "every master to hold the leader's registry", func() bool {
		want := c.registry(lead)
		if len(want) == 0 {
			return false
		}
		for i := range c.masters {
			if c.alive(i) && !bytes.Equal(c.registry(i), want) {
				return false
			}
		}
		return true
	})
}

func (c *mcluster) metric(i int, name string) float64 {
	return testcluster.Metric(c.masters[i].http, name)
}

func (s *rsched) running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.latest {
		if st == mesos.TASK_RUNNING {
			n++
		}
	}
	return n
}

func (s *rsched) subscriptions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subAt)
}

// Every master restarts at once: the registry (agents, frameworks, tasks)
// is on disk, the cluster elects a leader from it, and the framework and
// its running tasks are still there.
func TestRaftRestartAllMasters(t *testing.T) {
	c := newMCluster(t, 3, 1)
	fw := startRSched(t, c.seeds(), "sleep 120")
	fw.setLaunching(true)
	testcluster.WaitFor(t, 30*time.Second, "3 tasks running", func() bool { return fw.running() >= 3 })
	fw.setLaunching(false)
	testcluster.WaitFor(t, 30*time.Second, "launches to settle", func() bool { return len(fw.unaccounted(false)) == 0 })
	// The tasks to find again are those the framework saw running. Under
	// load, leadership can move while the framework accepts its first
	// offers: an ACCEPT of an offer the new leader never made is refused,
	// and reconciliation then rightly reports that task lost.
	want := fw.running()
	if n := fw.launchedCount(); n != want {
		t.Logf("%d of %d launched tasks running before the restart (%s)", want, n, fw.summary())
	}
	agentID := c.state().Slaves[0].ID
	subs := fw.subscriptions()
	for i := range c.masters {
		c.kill9(i)
	}
	for i := range c.masters {
		c.startMaster(i, c.peers())
	}
	st := c.state()
	if len(st.Slaves) != 1 || st.Slaves[0].ID != agentID {
		t.Errorf("after restarting every master the agents are %+v, want %s", st.Slaves, agentID)
	}
	if len(st.Frameworks) != 1 || st.Frameworks[0].ID != fw.id() {
		t.Fatalf("after restarting every master the frameworks are %+v, want %s", st.Frameworks, fw.id())
	}
	testcluster.WaitFor(t, 30*time.Second, "the framework to re-subscribe", func() bool { return fw.subscriptions() > subs })
	c.waitAgents(1)
	testcluster.WaitFor(t, 30*time.Second, "the leader to list every task running", func() bool {
		n := 0
		for _, f := range c.state().Frameworks {
			for _, tk := range f.Tasks {
				if tk.State == "TASK_RUNNING" {
					n++
				}
			}
		}
		return n == want
	})
	if fw.running() != want {
		t.Errorf("framework sees %d tasks running, want %d (%s)", fw.running(), want, fw.summary())
	}
	fw.checkStableID(t)
	c.checkInvariants()
	c.sameHistory()
}

// The leader is cut off from the other masters' raft traffic: the majority
// elects a new leader, the old one stops serving (503 while it knows no
// leader), and after healing it follows: one leader, one history.
func TestRaftIsolateLeader(t *testing.T) {
	c := newMCluster(t, 3, 2)
	fw := startRSched(t, c.seeds(), "sleep 0.3")
	fw.setLaunching(true)
	testcluster.WaitFor(t, 30*time.Second, "5 tasks launched", func() bool { return fw.launchedCount() >= 5 })
	old := c.leader(10 * time.Second)
	c.isolate(old, true)
	var lead int
	testcluster.WaitFor(t, 30*time.Second, "a new leader among the majority, the old one no longer serving", func() bool {
		lead = -1
		for i := range c.masters {
			if ok, _ := c.serving(i); ok {
				if i == old || lead >= 0 {
					return false
				}
				lead = i
			}
		}
		return lead >= 0
	})
	if v := c.metric(old, "allot_master_is_leader"); v != 0 {
		t.Errorf("isolated old leader: allot_master_is_leader = %v, want 0", v)
	}
	before := fw.launchedCount()
	testcluster.WaitFor(t, 30*time.Second, "5 more tasks launched under the new leader", func() bool { return fw.launchedCount() >= before+5 })
	c.isolate(old, false)
	if got := c.leader(30 * time.Second); got == old {
		t.Logf("the old leader was re-elected after healing (allowed)")
	}
	fw.setLaunching(false)
	testcluster.WaitFor(t, 60*time.Second, "every launched task to be finished or reported lost", func() bool {
		return len(fw.unaccounted(true)) == 0
	})
	t.Logf("framework: %s", fw.summary())
	fw.checkStableID(t)
	c.waitAgents(2)
	c.checkInvariants()
	c.sameHistory()
}

// A follower is removed and a fresh master added in its place; the log has
// been compacted, so the newcomer catches up from a snapshot.
func TestRaftReplacePeer(t *testing.T) {
	c := newMCluster(t, 3, 1, "--raft-snapshot-threshold", "32", "--raft-trailing-logs", "8")
	fw := startRSched(t, c.seeds(), "sleep 0.1")
	fw.setLaunching(true)
	lead := c.leader(10 * time.Second)
	testcluster.WaitFor(t, 60*time.Second, "a snapshot on the leader", func() bool {
		snaps, _ := filepath.Glob(filepath.Join(c.masters[lead].dir, "raft", "snapshots", "*", "meta.json"))
		return len(snaps) > 0
	})
	fw.setLaunching(false)
	gone := (lead + 1) % 3
	out := allot(t, "operator", "raft", "remove-peer", "--master", c.masters[lead].http, c.masters[gone].http)
	t.Logf("remove-peer: %s", out)
	c.kill9(gone)
	c.masters[gone].p = nil
	fresh := c.newNode(3)
	c.masters = append(c.masters, fresh)
	c.startMaster(3, "") // not in any --peers: it waits to be added
	out = allot(t, "operator", "raft", "add-voter", "--master", c.masters[(lead+2)%3].http, fresh.http, fresh.raft)
	t.Logf("add-voter: %s", out)
	c.masters[gone] = nil
	c.leader(30 * time.Second)
	c.sameHistory()
	snaps, _ := filepath.Glob(filepath.Join(fresh.dir, "raft", "snapshots", "*", "meta.json"))
	if len(snaps) == 0 {
		t.Errorf("the fresh master holds no snapshot: it did not catch up from one")
	}
	peers := allot(t, "operator", "raft", "list-peers", "--master", fresh.http)
	if !strings.Contains(peers, fresh.http) || strings.Contains(peers, "127.0.0.1:0") {
		t.Errorf("list-peers from the fresh master:\n%s", peers)
	}
	// A registry saved with the operator verb and restored goes through
	// raft to every master, and the leader rebuilds from it. Tasks launched
	// before launching stopped must first finish and leave the registry:
	// one finishing between the save and the comparison below changed the
	// registry under the test (a flake, 1 run in 5).
	testcluster.WaitFor(t, 30*time.Second, "every launched task finished and left the registry", func() bool {
		if len(fw.unaccounted(true)) > 0 {
			return false
		}
		st := c.state()
		if st.Frameworks == nil {
			return false // no answer: ask again
		}
		for _, f := range st.Frameworks {
			if len(f.Tasks) > 0 {
				return false
			}
		}
		return true
	})
	c.sameHistory()
	file := filepath.Join(c.dir, "registry.snap")
	t.Logf("snapshot save: %s", allot(t, "operator", "snapshot", "save", "--master", strings.Join(c.seeds(), ","), file))
	saved, _ := os.ReadFile(file)
	t.Logf("snapshot restore: %s", allot(t, "operator", "snapshot", "restore", "--master", fresh.http, file))
	c.sameHistory()
	if got := c.registry(c.leader(30 * time.Second)); !bytes.Equal(got, saved) {
		t.Errorf("after restore the registry is %d bytes, the saved one %d", len(got), len(saved))
	}
	c.waitAgents(1)
	fw.checkStableID(t)
	c.checkInvariants()
}

// allot runs the allot binary and returns its output; it fails the test if
// the command fails.
func allot(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(allotBin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("allot %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// offersSince returns when the first OFFERS event after t arrived.
func (s *rsched) offerAfter(t time.Time) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, at := range s.offerAt {
		if at.After(t) {
			return at, true
		}
	}
	return time.Time{}, false
}

// BenchmarkFailover: three masters, two agents, one framework. Each op
// kills the leader with SIGKILL and measures until the framework receives
// its first offer from the new leader (detection, election, registry
// barrier and rebuild, agent re-registration, framework re-subscription
// through the 307, first allocation). The killed master is restarted, out
// of the timing, before the next op. Run with -benchtime=5x;
// ALLOT_FAILOVER_TRACE=1 logs each op's phases and the framework's calls.
func BenchmarkFailover(b *testing.B) {
	c := newMCluster(b, 3, 2)
	fw := startRSched(b, c.seeds(), "true")
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		lead := c.leader(30 * time.Second)
		c.waitAgents(2)
		mark := time.Now()
		testcluster.WaitFor(b, 30*time.Second, "an offer from the current leader", func() bool {
			_, ok := fw.offerAfter(mark)
			return ok
		})
		b.StartTimer()
		start := time.Now()
		c.kill9(lead)
		var at, ready time.Time
		testcluster.WaitFor(b, 60*time.Second, "the first offer from the new leader", func() bool {
			var ok bool
			if ready.IsZero() && os.Getenv("ALLOT_FAILOVER_TRACE") != "" {
				for j := range c.masters {
					if ok, _ := c.serving(j); ok && j != lead {
						ready = time.Now()
					}
				}
			}
			at, ok = fw.offerAfter(start)
			return ok
		})
		took = append(took, at.Sub(start))
		b.StopTimer()
		if os.Getenv("ALLOT_FAILOVER_TRACE") != "" {
			fw.mu.Lock()
			sub := fw.subAt[len(fw.subAt)-1].Sub(start)
			fw.mu.Unlock()
			b.Logf("op %d: a new leader served after %v, subscribed again after %v, first offer after %v", i, ready.Sub(start), sub, at.Sub(start))
		}
		c.startMaster(lead, c.peers())
		b.StartTimer()
	}
	b.StopTimer()
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	if len(took) > 0 {
		b.ReportMetric(took[len(took)/2].Seconds(), "median-failover-s")
		b.ReportMetric(took[len(took)-1].Seconds(), "worst-failover-s")
		b.Logf("failovers: %v", took)
	}
	fw.checkStableID(b)
}
