package registry

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// Registry is the replicated state: agents, frameworks, tasks with their
// latest status, and config. It is a raft.FSM: every change arrives as an
// api.Command through the log, so each master that applies the same log holds
// the same registry. Reads take a copy under the lock; the leader's live
// state (connections, offers, the allocator) lives in Master, not here.
type Registry struct {
	mu         sync.RWMutex
	agents     map[string]*api.AgentRecord
	frameworks map[string]*api.FrameworkRecord
	tasks      map[string]*api.TaskRecord // key TaskKey(framework, task)
	config     *api.ConfigRecord
	policy     *api.PolicyRecord      // nil until the first POLICY_SET (the master's policy.go)
	maint      *api.MaintenanceRecord // nil until the first MAINTENANCE_SET (maintenance.go)
	// hist is the completed tasks and the removed agents (history.go).
	hist registryHistory
	// held is each agent's checkpointed resources (reservations.go).
	held agentResources
	// unreachable is the agents marked unreachable (unreachable.go).
	unreachable unreachableAgents
	// quotas is every role's quota but the default, by role (quota.go).
	quotas map[string]*api.QuotaRecord
	// applyObs, if set before raft starts, observes how long each log
	// entry takes to apply (on every master, leader or not).
	applyObs func(time.Duration)
}

var _ raft.FSM = (*Registry)(nil)

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{
		agents:      map[string]*api.AgentRecord{},
		frameworks:  map[string]*api.FrameworkRecord{},
		tasks:       map[string]*api.TaskRecord{},
		config:      &api.ConfigRecord{},
		quotas:      map[string]*api.QuotaRecord{},
		hist:        newRegistryHistory(),
		held:        agentResources{},
		unreachable: newUnreachableAgents(),
	}
}

// ObserveApply makes obs observe how long each log entry takes to apply.
// Call it before raft starts: Apply reads it without a lock.
func (r *Registry) ObserveApply(obs func(time.Duration)) { r.applyObs = obs }

// TaskKey is the key of task in framework fw: the registry's, and the id
// TASK_REMOVE names.
func TaskKey(fw, task string) string { return fw + "/" + task }

// Apply decodes one log entry and applies it. It returns nil or an error
// (raft hands the value back to the proposer through the ApplyFuture).
func (r *Registry) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	start := time.Now()
	var c api.Command
	if err := proto.Unmarshal(l.Data, &c); err != nil {
		return fmt.Errorf("registry: log entry %d is not an api.Command: %w", l.Index, err)
	}
	err := r.ApplyCommand(&c)
	if r.applyObs != nil {
		r.applyObs(time.Since(start))
	}
	if err != nil {
		return err
	}
	return nil
}

// ApplyCommand applies one command. Unknown command types are an error and
// change nothing, so a newer leader's command does not corrupt an older
// follower's state silently.
func (r *Registry) ApplyCommand(c *api.Command) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.applyLocked(c, 0)
}

func (r *Registry) applyLocked(c *api.Command, depth int) error {
	switch c.GetType() {
	case api.CommandType_BATCH:
		if depth > 0 {
			return fmt.Errorf("registry: nested BATCH")
		}
		var first error
		for _, sub := range c.Batch {
			if err := r.applyLocked(sub, depth+1); err != nil && first == nil {
				first = err
			}
		}
		return first
	case api.CommandType_AGENT_UPSERT:
		if c.GetAgent().GetId() == "" {
			return fmt.Errorf("registry: AGENT_UPSERT without an agent id")
		}
		r.agents[c.Agent.Id] = c.Agent
		r.unreachable.forget(c.Agent.Id)
	case api.CommandType_AGENT_REMOVE:
		delete(r.agents, c.GetId())
		delete(r.held, c.GetId())
		r.unreachable.forget(c.GetId())
		r.hist.removeAgent(c.GetId())
	case api.CommandType_FRAMEWORK_UPSERT:
		if c.GetFramework().GetId() == "" {
			return fmt.Errorf("registry: FRAMEWORK_UPSERT without a framework id")
		}
		r.frameworks[c.Framework.Id] = c.Framework
	case api.CommandType_FRAMEWORK_REMOVE:
		gone := r.frameworks[c.GetId()]
		delete(r.frameworks, c.GetId())
		prefix := c.GetId() + "/"
		for k := range r.tasks {
			if len(k) > len(prefix) && k[:len(prefix)] == prefix {
				delete(r.tasks, k)
			}
		}
		r.hist.frameworkRemoved(c.GetId(), gone, int(c.GetLimit()))
	case api.CommandType_TASK_UPSERT:
		t := c.GetTask()
		if t.GetTaskId() == "" || t.GetFrameworkId() == "" {
			return fmt.Errorf("registry: TASK_UPSERT without framework and task ids")
		}
		r.tasks[TaskKey(t.FrameworkId, t.TaskId)] = t
	case api.CommandType_TASK_REMOVE:
		delete(r.tasks, c.GetId())
	case api.CommandType_TASK_COMPLETE:
		t := c.GetTask()
		if t.GetTaskId() == "" || t.GetFrameworkId() == "" {
			return fmt.Errorf("registry: TASK_COMPLETE without framework and task ids")
		}
		delete(r.tasks, TaskKey(t.FrameworkId, t.TaskId))
		if r.frameworks[t.FrameworkId] != nil {
			r.hist.complete(t, int(c.GetLimit()))
		}
	case api.CommandType_AGENT_UNREACHABLE, api.CommandType_AGENT_UNREACHABLE_GC:
		return r.applyUnreachableLocked(c)
	case api.CommandType_CONFIG_SET:
		if c.GetConfig() == nil {
			return fmt.Errorf("registry: CONFIG_SET without a config")
		}
		r.config = c.Config
	case api.CommandType_POLICY_SET:
		if c.GetPolicy() == nil {
			return fmt.Errorf("registry: POLICY_SET without a policy record")
		}
		r.policy = c.Policy
	case api.CommandType_MAINTENANCE_SET:
		return r.applyMaintenance(c)
	case api.CommandType_AGENT_RESOURCES_SET:
		return r.setAgentResourcesLocked(c)
	case api.CommandType_QUOTA_UPDATE:
		return r.applyQuotaLocked(c)
	default:
		return fmt.Errorf("registry: unknown command type %d", c.GetType())
	}
	return nil
}

// Size is the number of records in the registry (the config counts as one,
// each completed task and removed agent id as one).
func (r *Registry) Size() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := 1 + len(r.agents) + len(r.frameworks) + len(r.tasks) + len(r.quotas) + len(r.hist.removedOrder) + len(r.hist.completedInfo) + len(r.held) + len(r.unreachable.order)
	for _, list := range r.hist.completed {
		n += len(list)
	}
	return n
}

// Agents returns the registered agents sorted by id.
func (r *Registry) Agents() []*api.AgentRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*api.AgentRecord, 0, len(r.agents))
	for _, a := range r.agents {
		out = append(out, proto.Clone(a).(*api.AgentRecord))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out
}

// Frameworks returns the registered frameworks sorted by id.
func (r *Registry) Frameworks() []*api.FrameworkRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*api.FrameworkRecord, 0, len(r.frameworks))
	for _, f := range r.frameworks {
		out = append(out, proto.Clone(f).(*api.FrameworkRecord))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Id < out[j].Id })
	return out
}

// Tasks returns the registered tasks sorted by framework and task id.
func (r *Registry) Tasks() []*api.TaskRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*api.TaskRecord, 0, len(r.tasks))
	for _, t := range r.tasks {
		out = append(out, proto.Clone(t).(*api.TaskRecord))
	}
	sort.Slice(out, func(i, j int) bool {
		return TaskKey(out[i].FrameworkId, out[i].TaskId) < TaskKey(out[j].FrameworkId, out[j].TaskId)
	})
	return out
}

// Config returns the replicated config.
func (r *Registry) Config() *api.ConfigRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return proto.Clone(r.config).(*api.ConfigRecord)
}

// Policy returns the replicated policy record, nil if none was ever set.
func (r *Registry) Policy() *api.PolicyRecord {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.policy == nil {
		return nil
	}
	return proto.Clone(r.policy).(*api.PolicyRecord)
}

// records lists every record as a snapshot stream, in a fixed order.
func (r *Registry) records() []*api.SnapshotRecord {
	var out []*api.SnapshotRecord
	out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_Config{Config: r.Config()}})
	for _, a := range r.Agents() {
		out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_Agent{Agent: a}})
	}
	for _, f := range r.Frameworks() {
		out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_Framework{Framework: f}})
	}
	for _, t := range r.Tasks() {
		out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_Task{Task: t}})
	}
	if p := r.Policy(); p != nil {
		out = append(out, &api.SnapshotRecord{Record: &api.SnapshotRecord_Policy{Policy: p}})
	}
	out = append(out, r.maintenanceRecords()...)
	out = append(out, r.heldRecords()...)
	out = append(out, r.quotaSnapshotRecords()...)
	out = append(out, r.historyRecords()...)
	return append(out, r.unreachableRecords()...)
}

// Snapshot captures the registry as a list of typed records; Persist writes
// them as RecordIO frames.
func (r *Registry) Snapshot() (raft.FSMSnapshot, error) {
	return &registrySnapshot{records: r.records()}, nil
}

// WriteSnapshot writes the registry as a stream of RecordIO-framed
// api.SnapshotRecords.
func (r *Registry) WriteSnapshot(w io.Writer) error {
	return writeRecords(w, r.records())
}

func writeRecords(w io.Writer, recs []*api.SnapshotRecord) error {
	bw := bufio.NewWriter(w)
	for _, rec := range recs {
		// Deterministic: equal registries give equal snapshots (map order).
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rec)
		if err != nil {
			return err
		}
		if _, err := bw.WriteString(strconv.Itoa(len(b)) + "\n"); err != nil {
			return err
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// Restore replaces the registry with the records read from rc. The new state
// is built aside and swapped in under the lock, so a failed restore leaves
// the old state untouched.
func (r *Registry) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	next := NewRegistry()
	if err := readRecords(rc, next.put); err != nil {
		return err
	}
	r.mu.Lock()
	r.agents, r.frameworks, r.tasks, r.config = next.agents, next.frameworks, next.tasks, next.config
	r.policy, r.maint = next.policy, next.maint
	r.held, r.quotas = next.held, next.quotas
	next.hist.restored(next.frameworks)
	r.hist = next.hist
	r.unreachable = next.unreachable
	r.mu.Unlock()
	return nil
}

// ValidateSnapshot reads a registry snapshot to its end and reports the
// first damaged record, holding one record at a time: what an operator's
// restore is checked with before it goes to raft, at any size.
func ValidateSnapshot(rd io.Reader) (records int, err error) {
	err = readRecords(rd, func(*api.SnapshotRecord) error { records++; return nil })
	return records, err
}

// put adds one snapshot record to a registry being built (not yet shared).
func (r *Registry) put(rec *api.SnapshotRecord) error {
	switch x := rec.Record.(type) {
	case *api.SnapshotRecord_Agent:
		r.agents[x.Agent.GetId()] = x.Agent
	case *api.SnapshotRecord_Framework:
		r.frameworks[x.Framework.GetId()] = x.Framework
	case *api.SnapshotRecord_Task:
		r.tasks[TaskKey(x.Task.GetFrameworkId(), x.Task.GetTaskId())] = x.Task
	case *api.SnapshotRecord_Config:
		r.config = x.Config
	case *api.SnapshotRecord_Policy:
		r.policy = x.Policy
	case *api.SnapshotRecord_CompletedTask:
		r.hist.restoreTask(x.CompletedTask)
	case *api.SnapshotRecord_CompletedFramework:
		r.hist.completedInfo[x.CompletedFramework.GetId()] = x.CompletedFramework
	case *api.SnapshotRecord_RemovedAgent:
		r.hist.removeAgent(x.RemovedAgent)
	case *api.SnapshotRecord_Maintenance:
		r.maint = x.Maintenance
	case *api.SnapshotRecord_AgentResources:
		r.held[x.AgentResources.GetAgentId()] = x.AgentResources
	case *api.SnapshotRecord_UnreachableAgent:
		r.unreachable.mark(x.UnreachableAgent)
	case *api.SnapshotRecord_Quota:
		r.quotas[x.Quota.GetRole()] = x.Quota
	default:
		return errors.New("unknown record type")
	}
	return nil
}

// readRecords decodes the length-prefixed records of a snapshot and hands
// each to each, in order.
func readRecords(rd io.Reader, each func(*api.SnapshotRecord) error) error {
	br := bufio.NewReader(rd)
	// One buffer for every record: Unmarshal copies what it keeps, and a
	// snapshot streamed through a restore should not make garbage at the
	// rate it arrives.
	var buf bytes.Buffer
	for n := 0; ; n++ {
		line, err := br.ReadString('\n')
		if err == io.EOF && line == "" {
			return nil
		}
		if err != nil {
			return fmt.Errorf("registry snapshot record %d: reading length: %w", n, err)
		}
		size, err := strconv.Atoi(line[:len(line)-1])
		if err != nil || size < 0 || size > 64<<20 {
			return fmt.Errorf("registry snapshot record %d: bad length %q", n, line)
		}
		// Read the record as it arrives rather than allocating size bytes
		// up front: a damaged length line must not cost 64 MiB.
		buf.Reset()
		if _, err := io.CopyN(&buf, br, int64(size)); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("registry snapshot record %d: %w", n, err)
		}
		var rec api.SnapshotRecord
		if err := proto.Unmarshal(buf.Bytes(), &rec); err != nil {
			return fmt.Errorf("registry snapshot record %d: %w", n, err)
		}
		if err := each(&rec); err != nil {
			return fmt.Errorf("registry snapshot record %d: %w", n, err)
		}
	}
}

type registrySnapshot struct{ records []*api.SnapshotRecord }

func (s *registrySnapshot) Persist(sink raft.SnapshotSink) error {
	if err := writeRecords(sink, s.records); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *registrySnapshot) Release() {}
