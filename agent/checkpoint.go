package agent

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// executorCheckpoint is what the agent keeps on disk for an executor of a
// checkpointing framework, enough to find the process again after a restart
// and to resend unacknowledged updates.
type executorCheckpoint struct {
	FrameworkInfo []byte           `json:"framework_info"`
	ExecutorInfo  []byte           `json:"executor_info"`
	Command       bool             `json:"command"`
	CommandTask   bool             `json:"command_task"`
	Sandbox       string           `json:"sandbox"`
	ContainerID   string           `json:"container_id"`
	Pid           int              `json:"pid"`
	Tasks         []taskCheckpoint `json:"tasks"`
	GPUs          []int            `json:"gpus,omitempty"`
}

type taskCheckpoint struct {
	Info     []byte   `json:"info"`
	State    int32    `json:"state"`
	Latest   []byte   `json:"latest,omitempty"`
	Pending  [][]byte `json:"pending,omitempty"`
	Launched bool     `json:"launched"`
}

func (a *Agent) checkpointPath(ex *executor) string {
	return filepath.Join(a.cfg.WorkDir, "meta", "executors", ex.fw, ex.id+".json")
}

// checkpointLocked writes ex's checkpoint (checkpointing frameworks only).
// Writes go to a temporary file renamed into place, so a crash leaves the
// old or the new checkpoint, never half of one.
func (a *Agent) checkpointLocked(ex *executor) {
	if !ex.checkpoint {
		return
	}
	cp := executorCheckpoint{Command: ex.command, CommandTask: ex.commandTask, Sandbox: ex.sandbox, ContainerID: ex.containerID, Pid: ex.pid, GPUs: ex.gpus}
	cp.FrameworkInfo, _ = ex.fwInfo.Marshal()
	cp.ExecutorInfo, _ = ex.info.Marshal()
	for _, t := range ex.tasks {
		tc := taskCheckpoint{State: int32(t.state), Launched: t.launched}
		tc.Info, _ = t.info.Marshal()
		if t.latest != nil {
			tc.Latest, _ = t.latest.Marshal()
		}
		for _, p := range t.pending {
			b, _ := p.Marshal()
			tc.Pending = append(tc.Pending, b)
		}
		cp.Tasks = append(cp.Tasks, tc)
	}
	b, err := json.Marshal(&cp)
	if err == nil {
		err = writeFileAtomic(a.checkpointPath(ex), b)
	}
	if err != nil {
		a.log.Error().Err(err).Str("executor_id", ex.id).Msg("checkpoint failed")
	}
}

// recover reads checkpoints left by a previous run: executors whose process
// still lives wait for the executor to re-subscribe; the others are over and
// their unfinished tasks fail.
func (a *Agent) recover() {
	root := filepath.Join(a.cfg.WorkDir, "meta", "executors")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.json"))
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var cp executorCheckpoint
		if err := json.Unmarshal(b, &cp); err != nil {
			a.log.Warn().Str("file", f).Err(err).Msg("unreadable checkpoint; ignored")
			os.Remove(f)
			continue
		}
		ex := &executor{command: cp.Command, commandTask: cp.CommandTask, checkpoint: true, sandbox: cp.Sandbox, containerID: cp.ContainerID, pid: cp.Pid, gpus: cp.GPUs, tasks: map[string]*agentTask{}}
		if ex.fwInfo.Unmarshal(cp.FrameworkInfo) != nil || ex.info.Unmarshal(cp.ExecutorInfo) != nil {
			os.Remove(f)
			continue
		}
		ex.fw, ex.id = ex.fwInfo.GetID().GetValue(), ex.info.ExecutorID.Value
		for _, tc := range cp.Tasks {
			t := &agentTask{state: mesos.TaskState(tc.State), launched: tc.Launched}
			if t.info.Unmarshal(tc.Info) != nil {
				continue
			}
			if len(tc.Latest) > 0 {
				var st mesos.TaskStatus
				if st.Unmarshal(tc.Latest) == nil {
					t.latest = &st
				}
			}
			for _, p := range tc.Pending {
				var st mesos.TaskStatus
				if st.Unmarshal(p) == nil {
					t.pending = append(t.pending, &st)
				}
			}
			ex.tasks[t.info.TaskID.Value] = t
		}
		fwInfo := ex.fwInfo
		a.frameworks[ex.fw] = &fwInfo
		a.executors[exKey(ex.fw, ex.id)] = ex
		alive := ex.pid > 0 && syscall.Kill(ex.pid, 0) == nil
		a.log.Info().Str("executor_id", ex.id).Str("framework_id", ex.fw).Int("pid", ex.pid).Bool("alive", alive).Int("tasks", len(ex.tasks)).Msg("recovered executor")
		if !alive {
			ex.pid = 0
			go a.executorExited(ex, -1)
			continue
		}
		go a.watchPid(ex)
	}
}

// watchPid polls a recovered executor, which is not our child and cannot be
// waited for.
func (a *Agent) watchPid(ex *executor) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		if syscall.Kill(ex.pid, 0) != nil {
			a.executorExited(ex, -1)
			return
		}
	}
}

// taskRecordsLocked lists the tasks this agent knows, for REGISTER.
func (a *Agent) taskRecordsLocked() []*api.TaskRecord {
	var out []*api.TaskRecord
	for _, ex := range a.executors {
		for _, t := range ex.tasks {
			rec := &api.TaskRecord{FrameworkId: ex.fw, TaskId: t.info.TaskID.Value, AgentId: a.id, ExecutorId: ex.id, State: int32(t.state)}
			reported := t.latest
			if len(t.pending) > 0 {
				// The state the update stream has reached, not the latest:
				// a master answers reconciliation with what it was told
				// here, and the framework must not hear FINISHED from it
				// before the stream delivers the RUNNING still pending
				// (Mesos's status_update_state). The rest follows through
				// the stream.
				reported = t.pending[0]
				rec.State = int32(reported.GetState())
			}
			if ex.command && len(ex.tasks) == 1 && ex.id == t.info.TaskID.Value {
				rec.ExecutorId = ""
			}
			info := t.info
			if !ex.command {
				exi := ex.info
				info.Executor = &exi
			}
			rec.Info, _ = info.Marshal()
			if reported != nil {
				rec.Status, _ = reported.Marshal()
			}
			out = append(out, rec)
		}
	}
	return out
}

type execStats struct {
	ExecutorID  string    `json:"executor_id"`
	FrameworkID string    `json:"framework_id"`
	Source      string    `json:"source"`
	Statistics  procStats `json:"statistics"`
}

type procStats struct {
	Timestamp        float64 `json:"timestamp"`
	CpusUserTimeSecs float64 `json:"cpus_user_time_secs"`
	CpusSysTimeSecs  float64 `json:"cpus_system_time_secs"`
	MemRSSBytes      uint64  `json:"mem_rss_bytes"`
	// The container's charged memory and its limit (cgroups isolation only).
	MemTotalBytes  uint64 `json:"mem_total_bytes,omitempty"`
	MemLimitBytes  uint64 `json:"mem_limit_bytes,omitempty"`
	DiskReadBytes  uint64 `json:"disk_read_bytes"`
	DiskWriteBytes uint64 `json:"disk_write_bytes"`
	Processes      int    `json:"processes"`
	// Network bytes, Mesos's names; only when NetMeasured (see executorNet).
	NetRxBytes  uint64 `json:"net_rx_bytes"`
	NetTxBytes  uint64 `json:"net_tx_bytes"`
	NetMeasured bool   `json:"net_measured"`
}

// handleStatistics serves /monitor/statistics: per executor CPU time and
// resident memory of its process group, as Mesos's endpoint does.
func (a *Agent) handleStatistics(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	type pe struct {
		fw, id, cid string
		pid         int
	}
	var list []pe
	for _, ex := range a.executors {
		if ex.pid > 0 && !ex.exited {
			list = append(list, pe{ex.fw, ex.id, ex.containerID, ex.pid})
		}
	}
	a.mu.Unlock()
	sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	out := []execStats{}
	for _, e := range list {
		out = append(out, execStats{ExecutorID: e.id, FrameworkID: e.fw, Source: e.id, Statistics: a.iso.usage(e.cid, e.pid)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func (a *Agent) handleState(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	type jt struct {
		ID, State, ExecutorID, FrameworkID string
		PendingUpdates                     int
	}
	doc := map[string]any{"id": a.id, "hostname": a.cfg.Hostname, "pid": "slave(1)@" + a.addr, "resources": a.total.String(),
		"master": a.master, "connected": a.connected,
		"isolation": a.iso.kind(), "isolation_reason": a.isoWhy, "disk_isolation": a.diskDu, "container_images": a.imagesState(),
		"disk_quota_exceeded": a.diskQuotaExceeded, "disk_checks": a.diskChecks, "gpus": a.gpuState()}
	var tasks []jt
	for _, ex := range a.executors {
		for _, t := range ex.tasks {
			tasks = append(tasks, jt{t.info.TaskID.Value, t.state.String(), ex.id, ex.fw, len(t.pending)})
		}
	}
	doc["tasks"] = tasks
	doc["cni"] = a.cniState() // container_network.go
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(doc)
}

// handleSandboxFile serves GET /files/sandbox?framework_id=F&executor_id=E&file=stdout:
// a file of the executor's latest run (stdout and stderr are what `allot
// run` shows). Only plain names inside the sandbox are served, and the
// ids must be given as they are (no patterns).
func (a *Agent) handleSandboxFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	fw, exID, name := q.Get("framework_id"), q.Get("executor_id"), q.Get("file")
	if fw == "" || exID == "" || name == "" || filepath.Base(name) != name || name == ".." {
		http.Error(w, "need framework_id, executor_id and a plain file name", http.StatusBadRequest)
		return
	}
	for _, id := range []string{fw, exID} {
		if err := checkSandboxID(id); err != nil {
			a.writeFileError(w, r, err)
			return
		}
	}
	sandbox := a.latestSandbox(fw, exID)
	if sandbox == "" {
		http.Error(w, "no sandbox for executor "+exID+" of framework "+fw, http.StatusNotFound)
		return
	}
	if err := a.authorizeSandbox(auth.SubjectFrom(r.Context()), fw, exID, sandbox); err != nil {
		a.writeFileError(w, r, err)
		return
	}
	http.ServeFile(w, r, filepath.Join(sandbox, name))
}
