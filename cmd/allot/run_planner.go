package main

import (
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/framework/sched"
	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/resources"
)

// runTaskSpec is the one task allot run launches.
type runTaskSpec struct {
	argv  []string
	shell bool
	need  resources.Resources
	name  string   // --name; empty: the command line
	env   []string // --env K=V
}

func (s runTaskSpec) command() *mesos.CommandInfo {
	var ci *mesos.CommandInfo
	if s.shell {
		v := strings.Join(s.argv, " ")
		ci = &mesos.CommandInfo{Value: &v, Shell: boolp(true)}
	} else {
		ci = &mesos.CommandInfo{Value: &s.argv[0], Arguments: s.argv, Shell: boolp(false)}
	}
	if len(s.env) > 0 {
		ci.Environment = &mesos.Environment{}
		for _, kv := range s.env {
			k, v, _ := strings.Cut(kv, "=")
			ci.Environment.Variables = append(ci.Environment.Variables, mesos.Environment_Variable{Name: k, Value: &v})
		}
	}
	return ci
}

// taskName is --name, or the command line.
func (s runTaskSpec) taskName() string {
	if s.name != "" {
		return s.name
	}
	return strings.Join(s.argv, " ")
}

// runRelaunches bounds how often allot run launches its task again after
// the masters answered that they never heard of it.
const runRelaunches = 3

// runPlanner is allot run's sched.Planner: it launches the task on the
// first offer that fits and hands its terminal status to done. The sched
// client reconciles it after every re-subscription, so a master failover
// finds the task again instead of losing it.
type runPlanner struct {
	spec runTaskSpec
	base string
	log  io.Writer
	done chan mesos.TaskStatus // the terminal status, sent once
	// reconcile asks the master about one task, off the event loop (set
	// once the client exists).
	reconcile func(taskID, agentID string)
	// onState, if set, hears every state of the current task (under mu:
	// it must not call back).
	onState func(taskID string, st mesos.TaskState)

	mu        sync.Mutex
	taskID    string
	tries     int  // launches made
	launched  bool // a launch is outstanding (or was ACCEPTed)
	confirmed bool // the task was seen past TASK_STAGING: it exists
	finished  bool
	agent     string
	url       string
}

func newRunPlanner(spec runTaskSpec, taskID string, log io.Writer) *runPlanner {
	return &runPlanner{spec: spec, base: taskID, taskID: taskID, log: log, done: make(chan mesos.TaskStatus, 1)}
}

func (p *runPlanner) Offers(offers []mesos.Offer) []sched.Launch {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.launched || p.finished {
		return nil
	}
	for _, o := range offers {
		if !offerHas(o, p.spec.need) {
			continue
		}
		if p.tries > 0 {
			p.taskID = p.base + "-" + strconv.Itoa(p.tries+1)
		}
		p.tries++
		p.launched, p.agent = true, o.AgentID.Value
		if o.URL != nil {
			p.url = tlsconf.URL(o.URL.Scheme == "https", net.JoinHostPort(o.URL.Address.GetHostname(), strconv.Itoa(int(o.URL.Address.GetPort()))), "")
		}
		t := mesos.TaskInfo{Name: p.spec.taskName(), TaskID: mesos.TaskID{Value: p.taskID}, AgentID: o.AgentID,
			Command: p.spec.command(), Resources: resources.ToMesos(p.spec.need, "", "")}
		fmt.Fprintf(p.log, "task %s launched on agent %s\n", p.taskID, o.AgentID.Value)
		return []sched.Launch{{Offer: o.ID, Tasks: []mesos.TaskInfo{t}}}
	}
	return nil
}

// Update prints the task's states and hands on the terminal one. A launch
// the masters never took (the leader that took the ACCEPT died before it
// was recorded: reconciliation then answers TASK_LOST for a task the
// master does not know) is made again on the next offer, so the command
// runs once whatever the failover did. A failed ACCEPT may still have been
// taken (a timeout), so it is not relaunched but reconciled: the answer
// says which it was.
func (p *runPlanner) Update(st mesos.TaskStatus) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st.TaskID.Value != p.taskID || p.finished {
		return
	}
	if st.GetSource() == mesos.SOURCE_MASTER && st.GetState() == mesos.TASK_ERROR && strings.HasPrefix(st.GetMessage(), "ACCEPT failed") {
		fmt.Fprintf(p.log, "task %s: %s; asking the master whether it took the launch\n", p.taskID, st.GetMessage())
		if p.reconcile != nil {
			go p.reconcile(p.taskID, p.agent)
		}
		return
	}
	fmt.Fprintf(p.log, "task %s: %s %s\n", p.taskID, st.GetState(), st.GetMessage())
	switch {
	case !taskstate.IsTerminal(st.GetState()):
		if st.GetState() != mesos.TASK_STAGING {
			p.confirmed = true
		}
		p.tellState(st.GetState())
		return
	case p.neverLaunched(st) && p.tries <= runRelaunches:
		p.launched = false
		fmt.Fprintf(p.log, "task %s never reached an agent; launching it again\n", p.taskID)
		return
	}
	p.finished = true
	p.tellState(st.GetState())
	p.done <- st
}

// tellState hands a state of the current task to onState. Caller holds p.mu.
func (p *runPlanner) tellState(st mesos.TaskState) {
	if p.onState != nil {
		p.onState(p.taskID, st)
	}
}

// neverLaunched reports whether st is a reconciliation's answer that the
// master has no record of the current launch, for a task never seen past
// TASK_STAGING. Caller holds p.mu.
func (p *runPlanner) neverLaunched(st mesos.TaskStatus) bool {
	return !p.confirmed && st.GetSource() == mesos.SOURCE_MASTER && st.GetState() == mesos.TASK_LOST &&
		st.GetReason() == mesos.REASON_RECONCILIATION && strings.Contains(st.GetMessage(), "unknown")
}

func (p *runPlanner) Wants() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return !p.launched && !p.finished
}

func (p *runPlanner) Tasks() map[string]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.launched || p.finished {
		return nil
	}
	return map[string]string{p.taskID: p.agent}
}

func (p *runPlanner) current() (taskID, agent, url string, launched bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.taskID, p.agent, p.url, p.launched
}

func boolp(b bool) *bool { return &b }

func offerHas(o mesos.Offer, need resources.Resources) bool {
	byRole, err := resources.FromMesos(o.Resources)
	if err != nil {
		return false
	}
	return byRole[resources.Unreserved].Contains(need)
}
