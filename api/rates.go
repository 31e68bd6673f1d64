package api

import (
	"errors"
	"fmt"
)

// UsageRates is what two successive Usage reports of one agent say about
// the interval between them: the host's CPU busy and I/O-wait fractions,
// its disk and network throughput, how busy its disks were, and each
// executor's throughput. It is what the co-location bandit's goodness
// measure (and Prophet's backoff) read; the master computes it with
// RatesBetween and hands it to the allocator as numbers.
type UsageRates struct {
	// Seconds is the wall-clock length of the interval.
	Seconds float64
	// CPUMeasured is false when the reports carry no total CPU time (an
	// agent older than cpus_total_seconds) or the kernel counted none in
	// the interval; CPU and IOWait are then 0 and mean "unknown".
	CPUMeasured bool
	// CPU is the fraction of all CPU time that was busy (every mode except
	// idle and iowait), in [0, 1]. IOWait is the fraction spent idle with
	// I/O outstanding, in [0, 1]: the paper's u_cpu and u_wait.
	CPU, IOWait float64
	// Throughputs in MB/s (10^6 bytes per second, as disk_bw and net_bw).
	DiskReadMBps, DiskWriteMBps float64
	NetRxMBps, NetTxMBps        float64
	// DiskBusy is the mean fraction of the interval the counted disks had
	// I/O in flight, in [0, 1] (0 when the agent counts no disk).
	DiskBusy float64
	// Executors holds one entry per executor present in both reports, in
	// the order of the newer report. An executor that appeared during the
	// interval has no rate yet: its counters started at some unknown moment
	// inside it.
	Executors []ExecutorRates
}

// ExecutorRates is one executor's share of an interval.
type ExecutorRates struct {
	FrameworkID, ExecutorID string
	// Reset is true when one of the executor's counters went backwards: a
	// process of its tree exited (its CPU time leaves the sum) or the
	// executor was relaunched under the same id. The interval's rates are
	// unknown and left at 0 rather than guessed; the next interval is
	// measured from the newer report again.
	Reset bool
	// CPUCores is CPU seconds used per second (user + system), so 1.5 means
	// one and a half cores busy.
	CPUCores                    float64
	DiskReadMBps, DiskWriteMBps float64
	// NetMeasured copies ExecutorUsage.net_measured (both reports must say
	// so); without it NetRxMBps and NetTxMBps are 0 and mean "unknown".
	NetMeasured          bool
	NetRxMBps, NetTxMBps float64
}

// ErrNoElapsed says the newer report is not later than the older one (the
// same report twice, or a clock step backwards): no rate can be formed.
var ErrNoElapsed = errors.New("usage: no time elapsed between reports")

// ErrCounterReset says a host counter went backwards: the host rebooted
// (its counters count from boot) or the agent id moved to another machine.
// The caller should keep the newer report as its new baseline.
var ErrCounterReset = errors.New("usage: host counter went backwards")

const mb = 1e6

// RatesBetween turns two successive reports of one agent into rates over
// the interval between them. It is pure: the caller keeps the previous
// report. It fails with ErrNoElapsed or ErrCounterReset (wrapped, naming
// the counter) rather than return rates that mean nothing; an agent
// restart alone resets nothing, since host counters count from boot.
func RatesBetween(prev, cur *Usage) (UsageRates, error) {
	if prev == nil || cur == nil {
		return UsageRates{}, errors.New("usage: need two reports")
	}
	dt := float64(cur.GetTimestampUnixNano()-prev.GetTimestampUnixNano()) / 1e9
	if dt <= 0 {
		return UsageRates{}, ErrNoElapsed
	}
	r := UsageRates{Seconds: dt}
	counters := []struct {
		name      string
		old, new  uint64
		perSecond *float64
	}{
		{"disk_read_bytes", prev.GetDiskReadBytes(), cur.GetDiskReadBytes(), &r.DiskReadMBps},
		{"disk_write_bytes", prev.GetDiskWriteBytes(), cur.GetDiskWriteBytes(), &r.DiskWriteMBps},
		{"net_rx_bytes", prev.GetNetRxBytes(), cur.GetNetRxBytes(), &r.NetRxMBps},
		{"net_tx_bytes", prev.GetNetTxBytes(), cur.GetNetTxBytes(), &r.NetTxMBps},
	}
	for _, c := range counters {
		if c.new < c.old {
			return UsageRates{}, fmt.Errorf("%w: %s %d -> %d", ErrCounterReset, c.name, c.old, c.new)
		}
		*c.perSecond = float64(c.new-c.old) / mb / dt
	}
	seconds := []struct {
		name     string
		old, new float64
	}{
		{"cpus_total_seconds", prev.GetCpusTotalSeconds(), cur.GetCpusTotalSeconds()},
		{"cpus_idle_seconds", prev.GetCpusIdleSeconds(), cur.GetCpusIdleSeconds()},
		{"cpus_iowait_seconds", prev.GetCpusIowaitSeconds(), cur.GetCpusIowaitSeconds()},
		{"disk_busy_seconds", prev.GetDiskBusySeconds(), cur.GetDiskBusySeconds()},
	}
	for _, c := range seconds {
		if c.new < c.old {
			return UsageRates{}, fmt.Errorf("%w: %s %g -> %g", ErrCounterReset, c.name, c.old, c.new)
		}
	}
	r.CPUMeasured, r.CPU, r.IOWait = cpuFractions(prev, cur)
	if n := cur.GetDiskDevices(); n > 0 {
		// Devices may come and go between reports (hotplug); the newer
		// count is the one whose io_ticks make up the newer sum.
		r.DiskBusy = clamp01((cur.GetDiskBusySeconds() - prev.GetDiskBusySeconds()) / (dt * float64(n)))
	}
	r.Executors = executorRates(prev.GetExecutors(), cur.GetExecutors(), dt)
	return r, nil
}

// cpuFractions reads the busy and iowait fractions of the CPU time the
// kernel counted between two reports. Dividing by the counted total rather
// than by wall time x CPUs needs neither the CPU count nor USER_HZ, and
// stays right when CPUs go offline.
func cpuFractions(prev, cur *Usage) (measured bool, busy, iowait float64) {
	total := cur.GetCpusTotalSeconds() - prev.GetCpusTotalSeconds()
	if total <= 0 {
		return false, 0, 0
	}
	idle := cur.GetCpusIdleSeconds() - prev.GetCpusIdleSeconds()
	wait := cur.GetCpusIowaitSeconds() - prev.GetCpusIowaitSeconds()
	// iowait may dip by a tick on some kernels (it is sampled per CPU and
	// summed); clamping keeps a fraction a fraction.
	return true, clamp01(1 - (idle+wait)/total), clamp01(wait / total)
}

func executorRates(prev, cur []*ExecutorUsage, dt float64) []ExecutorRates {
	type key struct{ fw, ex string }
	old := make(map[key]*ExecutorUsage, len(prev))
	for _, e := range prev {
		old[key{e.GetFrameworkId(), e.GetExecutorId()}] = e
	}
	var out []ExecutorRates
	for _, e := range cur {
		p, ok := old[key{e.GetFrameworkId(), e.GetExecutorId()}]
		if !ok {
			continue
		}
		out = append(out, oneExecutor(p, e, dt))
	}
	return out
}

func oneExecutor(p, e *ExecutorUsage, dt float64) ExecutorRates {
	r := ExecutorRates{FrameworkID: e.GetFrameworkId(), ExecutorID: e.GetExecutorId()}
	cpuOld := p.GetCpusUserSeconds() + p.GetCpusSystemSeconds()
	cpuNew := e.GetCpusUserSeconds() + e.GetCpusSystemSeconds()
	r.NetMeasured = p.GetNetMeasured() && e.GetNetMeasured()
	if cpuNew < cpuOld || e.GetDiskReadBytes() < p.GetDiskReadBytes() || e.GetDiskWriteBytes() < p.GetDiskWriteBytes() ||
		r.NetMeasured && (e.GetNetRxBytes() < p.GetNetRxBytes() || e.GetNetTxBytes() < p.GetNetTxBytes()) {
		r.Reset = true
		return r
	}
	r.CPUCores = (cpuNew - cpuOld) / dt
	r.DiskReadMBps = float64(e.GetDiskReadBytes()-p.GetDiskReadBytes()) / mb / dt
	r.DiskWriteMBps = float64(e.GetDiskWriteBytes()-p.GetDiskWriteBytes()) / mb / dt
	if r.NetMeasured {
		r.NetRxMBps = float64(e.GetNetRxBytes()-p.GetNetRxBytes()) / mb / dt
		r.NetTxMBps = float64(e.GetNetTxBytes()-p.GetNetTxBytes()) / mb / dt
	}
	return r
}

func clamp01(x float64) float64 {
	switch {
	case x < 0:
		return 0
	case x > 1:
		return 1
	}
	return x
}
