// Package registrytest holds what the registry's tests and the master's
// replication tests share: a log of one command of every type.
package registrytest

import (
	"strings"

	"github.com/allot-sched/allot/api"
)

// Commands returns one command of every type, in an order the registry
// applies without error.
func Commands() []*api.Command {
	return []*api.Command{
		{Type: api.CommandType_AGENT_UPSERT, Agent: &api.AgentRecord{Id: "a1", Hostname: "h1", Address: "127.0.0.1:5051", Resources: "cpus:4;mem:1024", Attributes: map[string]string{"rack": "r1"}}},
		{Type: api.CommandType_AGENT_UPSERT, Agent: &api.AgentRecord{Id: "a2", Address: "127.0.0.1:5052", Resources: "cpus:2"}},
		{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: &api.FrameworkRecord{Id: "f1", Info: []byte{1, 2}, RegisteredUnixNano: 7}},
		{Type: api.CommandType_TASK_UPSERT, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t1", AgentId: "a1", State: 1, Resources: "cpus:1"}},
		{Type: api.CommandType_TASK_UPSERT, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t2", AgentId: "a2"}},
		{Type: api.CommandType_CONFIG_SET, Config: &api.ConfigRecord{Weights: map[string]float64{"prod": 2}}},
		{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: &api.FrameworkRecord{Id: "f2"}},
		{Type: api.CommandType_TASK_UPSERT, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t3", AgentId: "a1", State: 2}},
		{Type: api.CommandType_TASK_COMPLETE, Task: &api.TaskRecord{FrameworkId: "f1", TaskId: "t3", AgentId: "a1", State: 2}, Limit: 10},
		{Type: api.CommandType_TASK_COMPLETE, Task: &api.TaskRecord{FrameworkId: "f2", TaskId: "t4", AgentId: "a1", State: 3}},
		{Type: api.CommandType_FRAMEWORK_REMOVE, Id: "f2", Limit: 5},
		{Type: api.CommandType_BATCH, Batch: []*api.Command{
			{Type: api.CommandType_TASK_REMOVE, Id: "f1/t2"},
			{Type: api.CommandType_AGENT_REMOVE, Id: "a2"},
		}},
		{Type: api.CommandType_AGENT_UPSERT, Agent: &api.AgentRecord{Id: "a3", Address: "127.0.0.1:5053", Resources: "cpus:1"}},
		{Type: api.CommandType_AGENT_UNREACHABLE, Agent: &api.AgentRecord{Id: "a3", Address: "127.0.0.1:5053", Resources: "cpus:1"}, UnixNano: 5},
		{Type: api.CommandType_AGENT_UNREACHABLE, Agent: &api.AgentRecord{Id: "a4", Address: "127.0.0.1:5054"}, UnixNano: 9},
		{Type: api.CommandType_AGENT_UNREACHABLE_GC, UnixNano: 6, Limit: 10},
		{Type: api.CommandType_AGENT_UNREACHABLE, Agent: &api.AgentRecord{Id: "a5", Address: "127.0.0.1:5055"}, UnixNano: 11},
	}
}

// TaskIDs lists records as "framework/task", space-separated.
func TaskIDs(recs []*api.TaskRecord) string {
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.FrameworkId+"/"+r.TaskId)
	}
	return strings.Join(ids, " ")
}
