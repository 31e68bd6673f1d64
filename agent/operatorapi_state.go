package agent

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/user"
	"sort"
	"strconv"
	"syscall"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	magent "github.com/mesos/mesos-go/api/v1/lib/agent"

	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/resources"
)

// What the agent's operator API reports of the agent's own state, in
// Mesos's types. The agent forgets an executor and its tasks once they are
// over and acknowledged, so the completed_* lists stay empty: the master
// (GET_TASKS there) keeps the history.

// agentInfoLocked is the agent as GET_AGENT describes it. Caller holds a.mu.
func (a *Agent) agentInfoLocked() mesos.AgentInfo {
	info := mesos.AgentInfo{Hostname: a.cfg.Hostname, Resources: resources.ToMesos(a.total, "", "")}
	if _, p, err := net.SplitHostPort(a.addr); err == nil {
		if n, err := strconv.Atoi(p); err == nil {
			port := int32(n)
			info.Port = &port
		}
	}
	if a.id != "" {
		info.ID = &mesos.AgentID{Value: a.id}
	}
	names := make([]string, 0, len(a.cfg.Attributes))
	for k := range a.cfg.Attributes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		info.Attributes = append(info.Attributes, mesos.Attribute{Name: k, Type: mesos.TEXT, Text: &mesos.Value_Text{Value: a.cfg.Attributes[k]}})
	}
	return info
}

// sortedExecutorsLocked is a.executors by key. Caller holds a.mu.
func (a *Agent) sortedExecutorsLocked() []*executor {
	keys := make([]string, 0, len(a.executors))
	for k := range a.executors {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*executor, 0, len(keys))
	for _, k := range keys {
		out = append(out, a.executors[k])
	}
	return out
}

// getFrameworksLocked answers GET_FRAMEWORKS. Caller holds a.mu.
func (a *Agent) getFrameworksLocked() *magent.Response_GetFrameworks {
	ids := make([]string, 0, len(a.frameworks))
	for id := range a.frameworks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := &magent.Response_GetFrameworks{}
	for _, id := range ids {
		out.Frameworks = append(out.Frameworks, magent.Response_GetFrameworks_Framework{FrameworkInfo: *a.frameworks[id]})
	}
	return out
}

// getExecutorsLocked answers GET_EXECUTORS. Caller holds a.mu.
func (a *Agent) getExecutorsLocked() *magent.Response_GetExecutors {
	out := &magent.Response_GetExecutors{}
	for _, ex := range a.sortedExecutorsLocked() {
		if ex.exited {
			continue
		}
		out.Executors = append(out.Executors, magent.Response_GetExecutors_Executor{ExecutorInfo: ex.info})
	}
	return out
}

// getTasksLocked answers GET_TASKS: tasks whose executor has not yet
// taken them are queued (Mesos's queued_tasks), terminal ones whose
// updates are not all acknowledged are terminated, the rest launched.
// Caller holds a.mu.
func (a *Agent) getTasksLocked() *magent.Response_GetTasks {
	out := &magent.Response_GetTasks{}
	for _, ex := range a.sortedExecutorsLocked() {
		ids := make([]string, 0, len(ex.tasks))
		for id := range ex.tasks {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			t := ex.tasks[id]
			mt := a.mesosTaskLocked(ex, t)
			switch {
			case taskstate.IsTerminal(t.state):
				out.TerminatedTasks = append(out.TerminatedTasks, mt)
			case !t.launched:
				out.QueuedTasks = append(out.QueuedTasks, mt)
			default:
				out.LaunchedTasks = append(out.LaunchedTasks, mt)
			}
		}
	}
	return out
}

// mesosTaskLocked is t of ex as Mesos's Task. Caller holds a.mu.
func (a *Agent) mesosTaskLocked(ex *executor, t *agentTask) mesos.Task {
	st := t.state
	mt := mesos.Task{Name: t.info.Name, TaskID: t.info.TaskID, FrameworkID: mesos.FrameworkID{Value: ex.fw},
		AgentID: mesos.AgentID{Value: a.id}, State: &st, Resources: t.info.Resources, Labels: t.info.Labels,
		Container: t.info.Container, KillPolicy: t.info.KillPolicy, HealthCheck: t.info.HealthCheck, Discovery: t.info.Discovery}
	if !ex.commandTask {
		mt.ExecutorID = &mesos.ExecutorID{Value: ex.id}
	}
	if t.latest != nil {
		mt.Statuses = []mesos.TaskStatus{*t.latest}
		mt.StatusUpdateState = t.latest.State
		mt.StatusUpdateUUID = t.latest.UUID
	}
	return mt
}

// getContainers answers GET_CONTAINERS: each running executor's container
// with its usage, read outside a.mu (it reads /proc or cgroups).
func (a *Agent) getContainers() *magent.Response_GetContainers {
	type running struct {
		fw, id, name, cid string
		pid               int
	}
	a.mu.Lock()
	var list []running
	for _, ex := range a.sortedExecutorsLocked() {
		if ex.containerID != "" && ex.pid > 0 && !ex.exited {
			list = append(list, running{ex.fw, ex.id, ex.info.GetName(), ex.containerID, ex.pid})
		}
	}
	a.mu.Unlock()
	out := &magent.Response_GetContainers{}
	for _, c := range list {
		pid := uint32(c.pid)
		cid := mesos.ContainerID{Value: c.cid}
		entry := magent.Response_GetContainers_Container{FrameworkID: &mesos.FrameworkID{Value: c.fw},
			ExecutorID: &mesos.ExecutorID{Value: c.id}, ContainerID: cid,
			ContainerStatus:    &mesos.ContainerStatus{ContainerID: &cid, ExecutorPID: &pid},
			ResourceStatistics: resourceStatistics(a.iso.usage(c.cid, c.pid))}
		if c.name != "" {
			entry.ExecutorName = &c.name
		}
		out.Containers = append(out.Containers, entry)
	}
	return out
}

// resourceStatistics is s in Mesos's ResourceStatistics.
func resourceStatistics(s procStats) *mesos.ResourceStatistics {
	procs := uint32(s.Processes)
	rs := &mesos.ResourceStatistics{Timestamp: s.Timestamp, Processes: &procs,
		CPUsUserTimeSecs: &s.CpusUserTimeSecs, CPUsSystemTimeSecs: &s.CpusSysTimeSecs, MemRSSBytes: &s.MemRSSBytes}
	if s.MemTotalBytes > 0 {
		rs.MemTotalBytes = &s.MemTotalBytes
	}
	if s.MemLimitBytes > 0 {
		rs.MemLimitBytes = &s.MemLimitBytes
	}
	if s.NetMeasured {
		rs.NetRxBytes, rs.NetTxBytes = &s.NetRxBytes, &s.NetTxBytes
	}
	return rs
}

// listSandbox is LIST_FILES: the entries of a sandbox directory, or the
// file itself when path names a file (as Mesos's files process answers).
func (a *Agent) listSandbox(who auth.Subject, path string) ([]mesos.FileInfo, error) {
	path = trimSlash(path)
	real, err := a.resolveSandboxPath(who, path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fileErrorf(http.StatusNotFound, "no such file in the sandbox: %s", path)
	}
	names := ownerNames{}
	if !st.IsDir() {
		return []mesos.FileInfo{names.fileInfo(path, st)}, nil
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return nil, fileErrorf(http.StatusBadRequest, "cannot list %s: %v", path, err)
	}
	out := make([]mesos.FileInfo, 0, len(entries))
	for _, e := range entries {
		if st, err := e.Info(); err == nil {
			out = append(out, names.fileInfo(path+"/"+e.Name(), st))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func trimSlash(p string) string {
	for len(p) > 1 && p[len(p)-1] == '/' {
		p = p[:len(p)-1]
	}
	return p
}

// ownerNames caches, for one listing, the user and group names of the ids
// met: a sandbox directory's entries mostly share one owner.
type ownerNames map[string]string

// name is id's name (user or group), else the id itself.
func (n ownerNames) name(kind, id string) string {
	key := kind + id
	if v, ok := n[key]; ok {
		return v
	}
	v := id
	if kind == "u" {
		if u, err := user.LookupId(id); err == nil {
			v = u.Username
		}
	} else if g, err := user.LookupGroupId(id); err == nil {
		v = g.Name
	}
	n[key] = v
	return v
}

// fileInfo is st as Mesos's FileInfo: mode is the raw st_mode, uid and gid
// the owner's names where they resolve.
func (n ownerNames) fileInfo(path string, st os.FileInfo) mesos.FileInfo {
	size := uint64(st.Size())
	fi := mesos.FileInfo{Path: path, Size_: &size, Mtime: &mesos.TimeInfo{Nanoseconds: st.ModTime().UnixNano()}}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		nlink, mode := int32(sys.Nlink), uint32(sys.Mode)
		uid := n.name("u", strconv.Itoa(int(sys.Uid)))
		gid := n.name("g", strconv.Itoa(int(sys.Gid)))
		fi.Nlink, fi.Mode, fi.UID, fi.GID = &nlink, &mode, &uid, &gid
	}
	return fi
}

// readSandbox is READ_FILE: the file's size and up to length bytes (at
// most maxReadLength; all that is left when length is absent) from
// offset; past the end, no data.
func (a *Agent) readSandbox(who auth.Subject, path string, offset uint64, length *uint64) (uint64, []byte, error) {
	real, err := a.resolveSandboxPath(who, path)
	if err != nil {
		return 0, nil, err
	}
	f, err := os.Open(real)
	if err != nil {
		return 0, nil, fileErrorf(http.StatusNotFound, "cannot open %s: %v", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		return 0, nil, fileErrorf(http.StatusBadRequest, "%s is a directory: use LIST_FILES", path)
	}
	size := uint64(st.Size())
	if offset >= size {
		return size, nil, nil
	}
	n := min(size-offset, maxReadLength)
	if length != nil {
		n = min(n, *length)
	}
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, int64(offset))
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, nil, err
	}
	return size, buf[:got], nil
}
