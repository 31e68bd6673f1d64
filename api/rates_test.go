package api

import (
	"errors"
	"math"
	"testing"
)

// report builds a Usage at t seconds; fields not set stay 0.
func report(t float64, set func(u *Usage)) *Usage {
	u := &Usage{TimestampUnixNano: int64(t * 1e9)}
	if set != nil {
		set(u)
	}
	return u
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRatesBetweenHost(t *testing.T) {
	// 10 s on a 4-CPU host: 40 CPU seconds counted, 22 idle, 6 iowait, so
	// 12 busy (0.3) and 0.15 iowait; 50 MB read, 20 MB written, 5 MB in,
	// 15 MB out; 2 disks busy 4 s of their 20 device-seconds.
	prev := report(100, func(u *Usage) {
		u.CpusTotalSeconds, u.CpusIdleSeconds, u.CpusIowaitSeconds = 1000, 700, 50
		u.DiskReadBytes, u.DiskWriteBytes, u.NetRxBytes, u.NetTxBytes = 1e9, 2e9, 3e9, 4e9
		u.DiskBusySeconds, u.DiskDevices = 30, 2
	})
	cur := report(110, func(u *Usage) {
		u.CpusTotalSeconds, u.CpusIdleSeconds, u.CpusIowaitSeconds = 1040, 722, 56
		u.DiskReadBytes, u.DiskWriteBytes, u.NetRxBytes, u.NetTxBytes = 1e9+50e6, 2e9+20e6, 3e9+5e6, 4e9+15e6
		u.DiskBusySeconds, u.DiskDevices = 34, 2
	})
	r, err := RatesBetween(prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"seconds", r.Seconds, 10},
		{"cpu", r.CPU, 0.3},
		{"iowait", r.IOWait, 0.15},
		{"disk read", r.DiskReadMBps, 5},
		{"disk write", r.DiskWriteMBps, 2},
		{"net rx", r.NetRxMBps, 0.5},
		{"net tx", r.NetTxMBps, 1.5},
		{"disk busy", r.DiskBusy, 0.2},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	if !r.CPUMeasured {
		t.Error("CPUMeasured false with total CPU time in both reports")
	}
}

func TestRatesBetweenRefuses(t *testing.T) {
	base := func(u *Usage) {
		u.CpusTotalSeconds, u.DiskReadBytes, u.NetTxBytes, u.DiskBusySeconds = 500, 1e9, 1e9, 20
	}
	cases := []struct {
		name      string
		prev, cur *Usage
		want      error
	}{
		{"same report twice", report(5, base), report(5, base), ErrNoElapsed},
		{"clock went back", report(5, base), report(4, base), ErrNoElapsed},
		// A reboot: counters since boot start again from small values.
		{"host reboot bytes", report(5, base), report(15, func(u *Usage) { base(u); u.DiskReadBytes = 10 }), ErrCounterReset},
		{"host reboot net", report(5, base), report(15, func(u *Usage) { base(u); u.NetTxBytes = 0 }), ErrCounterReset},
		{"host reboot cpu", report(5, base), report(15, func(u *Usage) { base(u); u.CpusTotalSeconds = 3 }), ErrCounterReset},
		{"host reboot busy", report(5, base), report(15, func(u *Usage) { base(u); u.DiskBusySeconds = 1 }), ErrCounterReset},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := RatesBetween(c.prev, c.cur); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
	if _, err := RatesBetween(nil, report(1, nil)); err == nil {
		t.Error("nil previous report accepted")
	}
}

func TestRatesBetweenOldAgent(t *testing.T) {
	// An agent older than cpus_total_seconds reports only user and system
	// time: the fractions are unknown, not zero load, and say so.
	prev := report(0, func(u *Usage) { u.CpusUserSeconds, u.DiskReadBytes = 10, 0 })
	cur := report(2, func(u *Usage) { u.CpusUserSeconds, u.DiskReadBytes = 14, 4e6 })
	r, err := RatesBetween(prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	if r.CPUMeasured || r.CPU != 0 || r.IOWait != 0 {
		t.Errorf("old agent: CPUMeasured=%v CPU=%g IOWait=%g, want false 0 0", r.CPUMeasured, r.CPU, r.IOWait)
	}
	if !near(r.DiskReadMBps, 2) || r.DiskBusy != 0 {
		t.Errorf("old agent: read %g MB/s busy %g, want 2 and 0 (no devices reported)", r.DiskReadMBps, r.DiskBusy)
	}
}

func TestRatesBetweenClamps(t *testing.T) {
	// iowait sampled per CPU can run a tick ahead of the total; io_ticks of
	// a device can exceed wall time by rounding. Fractions stay in [0, 1].
	prev := report(0, func(u *Usage) { u.DiskDevices = 1 })
	cur := report(1, func(u *Usage) {
		u.CpusTotalSeconds, u.CpusIdleSeconds, u.CpusIowaitSeconds = 4, 0.5, 4.01
		u.DiskBusySeconds, u.DiskDevices = 1.004, 1
	})
	r, err := RatesBetween(prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	if r.CPU != 0 || r.IOWait != 1 || r.DiskBusy != 1 {
		t.Errorf("CPU=%g IOWait=%g DiskBusy=%g, want 0 1 1", r.CPU, r.IOWait, r.DiskBusy)
	}
}

func TestRatesBetweenExecutors(t *testing.T) {
	ex := func(id string, cpu float64, rd, wr uint64, net bool, rx uint64) *ExecutorUsage {
		return &ExecutorUsage{FrameworkId: "fw", ExecutorId: id, CpusUserSeconds: cpu / 2, CpusSystemSeconds: cpu / 2,
			DiskReadBytes: rd, DiskWriteBytes: wr, NetMeasured: net, NetRxBytes: rx}
	}
	prev := report(0, func(u *Usage) {
		u.Executors = []*ExecutorUsage{
			ex("steady", 10, 1e6, 0, false, 0),
			ex("restarted", 50, 9e6, 9e6, false, 0),
			ex("namespaced", 0, 0, 0, true, 1e6),
			ex("gone", 1, 0, 0, false, 0),
		}
	})
	cur := report(4, func(u *Usage) {
		u.Executors = []*ExecutorUsage{
			ex("new", 3, 0, 0, false, 0),
			ex("steady", 16, 9e6, 4e6, false, 0),
			ex("restarted", 2, 1e6, 0, false, 0), // relaunched under its old id
			ex("namespaced", 2, 0, 0, true, 9e6),
		}
	})
	r, err := RatesBetween(prev, cur)
	if err != nil {
		t.Fatal(err)
	}
	want := []ExecutorRates{
		{FrameworkID: "fw", ExecutorID: "steady", CPUCores: 1.5, DiskReadMBps: 2, DiskWriteMBps: 1},
		{FrameworkID: "fw", ExecutorID: "restarted", Reset: true},
		{FrameworkID: "fw", ExecutorID: "namespaced", CPUCores: 0.5, NetMeasured: true, NetRxMBps: 2},
	}
	if len(r.Executors) != len(want) {
		t.Fatalf("executors = %+v, want %+v", r.Executors, want)
	}
	for i, w := range want {
		g := r.Executors[i]
		if g.ExecutorID != w.ExecutorID || g.Reset != w.Reset || g.NetMeasured != w.NetMeasured ||
			!near(g.CPUCores, w.CPUCores) || !near(g.DiskReadMBps, w.DiskReadMBps) ||
			!near(g.DiskWriteMBps, w.DiskWriteMBps) || !near(g.NetRxMBps, w.NetRxMBps) {
			t.Errorf("executor %d = %+v, want %+v", i, g, w)
		}
	}
}
