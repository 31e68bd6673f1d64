package agent

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/allot-sched/allot/api"
)

const clockTicks = 100 // USER_HZ on Linux

type procInfo struct {
	ppid, pgrp int
	f          []string // /proc/<pid>/stat fields after the command name
}

func readProcs() map[int]procInfo {
	procs := map[int]procInfo{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return procs
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		// fields after comm: state(0) ppid(1) pgrp(2) ... utime(11) stime(12) ... rss(21)
		f := strings.Fields(s[i+1:])
		if len(f) < 22 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		procs[pid] = procInfo{ppid, pgrp, f}
	}
	return procs
}

// treePids lists an executor's processes: its process group and every
// descendant (the command executor puts each task in a group of its own so
// that it can be signalled alone).
func treePids(root int, procs map[int]procInfo) []int {
	member := func(pid int) bool {
		for depth := 0; pid > 1 && depth < 64; depth++ {
			p, ok := procs[pid]
			if !ok {
				return false
			}
			if pid == root || p.pgrp == root {
				return true
			}
			pid = p.ppid
		}
		return false
	}
	var out []int
	for pid := range procs {
		if member(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// killTree sends sig to every process (and process group) of an executor's
// tree. The list is taken first: once the executor dies its children are
// re-parented and no longer look like its descendants.
func killTree(root int, sig syscall.Signal) {
	pids := treePids(root, readProcs())
	for _, pid := range pids {
		syscall.Kill(-pid, sig) // its group, if it leads one
		syscall.Kill(pid, sig)
	}
	syscall.Kill(-root, sig)
}

// groupStats sums CPU time, RSS and disk I/O over an executor's processes.
// CPU time includes each process's reaped children (cutime, cstime), as
// /proc/<pid>/io's bytes already do: otherwise a task that runs short
// commands would see its CPU time fall every time one of them exits, and a
// cumulative counter that falls cannot become a rate.
func groupStats(root int) procStats {
	st := procStats{Timestamp: float64(time.Now().UnixNano()) / 1e9}
	procs := readProcs()
	page := uint64(os.Getpagesize())
	tick := func(f []string, i int) float64 {
		n, _ := strconv.ParseUint(f[i], 10, 64)
		return float64(n) / clockTicks
	}
	pids := treePids(root, procs)
	for _, pid := range pids {
		p := procs[pid]
		rss, _ := strconv.ParseUint(p.f[21], 10, 64)
		st.CpusUserTimeSecs += tick(p.f, 11) + tick(p.f, 13)
		st.CpusSysTimeSecs += tick(p.f, 12) + tick(p.f, 14)
		st.MemRSSBytes += rss * page
		st.Processes++
		if io, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/io"); err == nil {
			for _, line := range strings.Split(string(io), "\n") {
				k, v, _ := strings.Cut(line, ": ")
				n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
				switch k {
				case "read_bytes":
					st.DiskReadBytes += n
				case "write_bytes":
					st.DiskWriteBytes += n
				}
			}
		}
	}
	st.NetRxBytes, st.NetTxBytes, st.NetMeasured = executorNet(pids)
	return st
}

// executorNet returns an executor's network bytes when they are its own:
// every process of its tree in one network namespace that is not the
// agent's, whose interfaces then carry only the executor's traffic.
// Otherwise (allot's containerizer starts executors in the agent's
// namespace) interface counters are shared with the whole host, the kernel
// keeps none per process, and the bytes are reported as not measured.
func executorNet(pids []int) (rx, tx uint64, measured bool) {
	host, err := os.Readlink("/proc/self/ns/net")
	if err != nil || len(pids) == 0 {
		return 0, 0, false
	}
	ns := make([]string, 0, len(pids))
	for _, pid := range pids {
		l, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net")
		if err != nil {
			return 0, 0, false
		}
		ns = append(ns, l)
	}
	if !ownNamespace(host, ns) {
		return 0, 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/net/dev")
	if err != nil {
		return 0, 0, false
	}
	rx, tx = parseNetDev(b, func(string) bool { return true })
	return rx, tx, true
}

// ownNamespace reports whether the namespaces of an executor's processes
// are one and the same, and not the agent's (host).
func ownNamespace(host string, ns []string) bool {
	if len(ns) == 0 {
		return false
	}
	for _, n := range ns {
		if n != ns[0] {
			return false
		}
	}
	return ns[0] != host
}

// hostStats reads host-wide CPU time by mode, memory, and network and disk
// counters of the physical devices (procfs.go says which count and why).
func hostStats() *api.Usage {
	u := &api.Usage{TimestampUnixNano: time.Now().UnixNano()}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		if c, ok := parseCPUStat(b); ok {
			u.CpusUserSeconds, u.CpusSystemSeconds = c.user, c.system
			u.CpusTotalSeconds, u.CpusIdleSeconds, u.CpusIowaitSeconds = c.total, c.idle, c.iowait
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var total, avail uint64
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				n, _ := strconv.ParseUint(f[1], 10, 64)
				switch f[0] {
				case "MemTotal:":
					total = n << 10
				case "MemAvailable:":
					avail = n << 10
				}
			}
		}
		u.MemTotalBytes, u.MemRssBytes = total, total-avail
	}
	if b, err := os.ReadFile("/proc/net/dev"); err == nil {
		u.NetRxBytes, u.NetTxBytes = parseNetDev(b, physicalNICs("/sys/class/net"))
	}
	if b, err := os.ReadFile("/proc/diskstats"); err == nil {
		d := parseDiskstats(b, physicalDisks("/sys/block", b))
		u.DiskReadBytes, u.DiskWriteBytes = d.readBytes, d.writeBytes
		u.DiskBusySeconds, u.DiskDevices = d.busySeconds, d.devices
	}
	return u
}

// usageLoop reports usage to the master every interval.
func (a *Agent) usageLoop(interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-t.C:
		}
		u := hostStats()
		a.fault.apply(a.cfg.FaultDiskBusyFile, u)
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
		for _, e := range list {
			// Disk bytes are the processes' own (/proc/<pid>/io read_bytes,
			// write_bytes: storage I/O, not page-cache hits or sockets).
			// Network bytes are 0 and NetMeasured false unless the executor
			// has a network namespace of its own (executorNet).
			s := a.iso.usage(e.cid, e.pid)
			u.Executors = append(u.Executors, &api.ExecutorUsage{FrameworkId: e.fw, ExecutorId: e.id, CpusUserSeconds: s.CpusUserTimeSecs,
				CpusSystemSeconds: s.CpusSysTimeSecs, MemRssBytes: s.MemRSSBytes, DiskReadBytes: s.DiskReadBytes, DiskWriteBytes: s.DiskWriteBytes,
				NetRxBytes: s.NetRxBytes, NetTxBytes: s.NetTxBytes, NetMeasured: s.NetMeasured})
		}
		a.send(&api.AgentCall{Type: api.AgentCallType_USAGE, Usage: u})
	}
}

func (a *Agent) handleHostStats(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(hostStats())
}
