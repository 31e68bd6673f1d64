package master

// tasksByAgent indexes the master's tasks by the agent they were placed on.
// A re-registering agent's report is checked against the tasks the master
// placed there, and a removed agent's tasks are lost: both used to scan
// every framework's every task, once per agent, so re-registering N agents
// after a failover cost N times all tasks (8% of a new leader's CPU at
// 10,000 agents, docs/scale.md).
//
// The index may hold more than it should but never less: every place that
// puts a task on an agent (launch, adoption from an agent's report, the
// registry after an election) adds it, and the places that forget a task
// remove it, but a reader keeps only the tasks that are still their
// framework's and still on that agent, and drops the rest. A path that
// forgets a task without removing it therefore costs memory until the
// agent's next lookup, never a wrong answer.
type tasksByAgent map[string]map[*task]struct{}

// place records that t runs on t.agent. Caller holds m.mu.
func (x tasksByAgent) place(t *task) {
	on := x[t.agent]
	if on == nil {
		on = map[*task]struct{}{}
		x[t.agent] = on
	}
	on[t] = struct{}{}
}

// forget removes t from t.agent's tasks. Caller holds m.mu.
func (x tasksByAgent) forget(t *task) {
	if on := x[t.agent]; on != nil {
		delete(on, t)
		if len(on) == 0 {
			delete(x, t.agent)
		}
	}
}

// moveTaskLocked puts t on agent (an agent reported a task the master
// had placed elsewhere). Caller holds m.mu.
func (m *Master) moveTaskLocked(t *task, agent string) {
	if t.agent == agent {
		return
	}
	m.tasksOn.forget(t)
	t.agent = agent
	m.tasksOn.place(t)
}

// tasksOnLocked returns the tasks the master has on agent, each with its
// framework, dropping stale entries. Caller holds m.mu.
func (m *Master) tasksOnLocked(agent string) []placedTask {
	on := m.tasksOn[agent]
	out := make([]placedTask, 0, len(on))
	for t := range on {
		fw := m.frameworks[t.fw]
		if fw == nil || fw.tasks[t.id] != t || t.agent != agent {
			delete(on, t)
			continue
		}
		out = append(out, placedTask{fw, t})
	}
	if len(on) == 0 {
		delete(m.tasksOn, agent)
	}
	return out
}

// placedTask is a task and its framework.
type placedTask struct {
	fw *framework
	t  *task
}
