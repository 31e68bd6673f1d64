package agent

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fakeSys builds a /sys/<sub> directory holding one entry per name; names
// in hw get a "device" entry, as hardware-backed devices do.
func fakeSys(t *testing.T, all, hw []string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range all {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range hw {
		if err := os.MkdirAll(filepath.Join(dir, n, "device"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParseCPUStat(t *testing.T) {
	c, ok := parseCPUStat(fixture(t, "stat"))
	if !ok {
		t.Fatal("no cpu line found")
	}
	// user nice system idle iowait irq softirq steal = 1000 200 300 5000
	// 400 10 20 30 ticks = 69.6 s; guest (150) and guest_nice (50) are
	// inside user and nice and must not be added again.
	want := cpuTimes{user: 10, system: 3, idle: 50, iowait: 4, total: 69.6}
	if math.Abs(c.total-want.total) > 1e-9 || c.user != want.user || c.system != want.system ||
		c.idle != want.idle || c.iowait != want.iowait {
		t.Errorf("cpu = %+v, want %+v", c, want)
	}
	if _, ok := parseCPUStat([]byte("intr 1 2 3\n")); ok {
		t.Error("found a cpu line where there is none")
	}
}

// The fixture stacks dm-0 on md0, a RAID0 of sda1 and nvme0n1p1; loop0 is
// backed by a file. Every byte of dm-0 is also in md0, in a partition and
// in its whole disk: only the physical whole disks may count.
func TestDiskRule(t *testing.T) {
	stats := fixture(t, "diskstats")
	// /sys/block lists whole disks only; partitions live below their disk.
	sys := fakeSys(t, []string{"sda", "nvme0n1", "md0", "dm-0", "loop0"}, []string{"sda", "nvme0n1"})
	rules := map[string]func(string) bool{
		"sysfs":     physicalDisks(sys, stats),
		"name rule": physicalDisks(filepath.Join(t.TempDir(), "absent"), stats),
	}
	want := map[string]bool{"sda": true, "sda1": false, "nvme0n1": true, "nvme0n1p1": false,
		"md0": false, "dm-0": false, "loop0": false}
	for rname, counted := range rules {
		for dev, w := range want {
			if got := counted(dev); got != w {
				t.Errorf("%s: counted(%s) = %v, want %v", rname, dev, got, w)
			}
		}
		d := parseDiskstats(stats, counted)
		// sda: 1000 sectors read, 2000 written, io_ticks 300 ms;
		// nvme0n1: 4000, 6000, 500 ms.
		wantTotals := diskTotals{readBytes: 5000 * 512, writeBytes: 8000 * 512, busySeconds: 0.8, devices: 2}
		if d.readBytes != wantTotals.readBytes || d.writeBytes != wantTotals.writeBytes || d.devices != wantTotals.devices ||
			math.Abs(d.busySeconds-wantTotals.busySeconds) > 1e-9 {
			t.Errorf("%s: totals = %+v, want %+v", rname, d, wantTotals)
		}
	}
	// What the rule prevents: summing every line counts the same bytes up
	// to four times over.
	all := parseDiskstats(stats, func(string) bool { return true })
	if all.readBytes <= 2*5000*512 {
		t.Errorf("fixture does not exercise double counting: all lines read %d bytes", all.readBytes)
	}
}

func TestDiskNameRule(t *testing.T) {
	rule := diskNameRule([]string{"sda", "sda1", "sdaa", "mmcblk0", "mmcblk0p2", "xvda", "xvda1", "sr0", "zram0", "nbd0", "ram1"})
	for dev, want := range map[string]bool{
		"sda": true, "sda1": false, "sdaa": true, "mmcblk0": true, "mmcblk0p2": false,
		"xvda": true, "xvda1": false, "sr0": true, "zram0": false, "nbd0": false, "ram1": false,
	} {
		if got := rule(dev); got != want {
			t.Errorf("counted(%s) = %v, want %v", dev, got, want)
		}
	}
}

func TestDiskRuleSysfsSlashNames(t *testing.T) {
	// Old RAID controllers name disks cciss/c0d0; sysfs spells it cciss!c0d0.
	sys := fakeSys(t, []string{"cciss!c0d0"}, []string{"cciss!c0d0"})
	if !physicalDisks(sys, nil)("cciss/c0d0") {
		t.Error("cciss/c0d0 not counted though sysfs has a device for it")
	}
}

func TestParseNetDev(t *testing.T) {
	b := fixture(t, "net_dev")
	cases := []struct {
		name   string
		sys    string
		rx, tx uint64
	}{
		// ifb0 mirrors eth0's ingress for shaping and docker0 bridges
		// traffic that also crosses eth0: only the NIC counts.
		{"physical NIC only", fakeSys(t, []string{"lo", "eth0", "ifb0", "docker0"}, []string{"eth0"}), 1000000, 2000000},
		// Inside a container no interface has a device: all but lo count.
		{"no physical NIC", fakeSys(t, []string{"lo", "eth0"}, nil), 2300000, 2400000},
	}
	for _, c := range cases {
		rx, tx := parseNetDev(b, physicalNICs(c.sys))
		if rx != c.rx || tx != c.tx {
			t.Errorf("%s: rx, tx = %d, %d, want %d, %d", c.name, rx, tx, c.rx, c.tx)
		}
	}
}

// TestHostStatsLive reads this machine's /proc: the new counters must be
// present and consistent (total covers idle and iowait).
func TestHostStatsLive(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc")
	}
	u := hostStats()
	if u.CpusTotalSeconds <= 0 || u.CpusTotalSeconds < u.CpusIdleSeconds+u.CpusIowaitSeconds {
		t.Errorf("cpu total %g, idle %g, iowait %g", u.CpusTotalSeconds, u.CpusIdleSeconds, u.CpusIowaitSeconds)
	}
	if u.DiskDevices == 0 && (u.DiskReadBytes != 0 || u.DiskBusySeconds != 0) {
		t.Errorf("disk bytes or busy time without a counted device: %+v", u)
	}
}

func TestOwnNamespace(t *testing.T) {
	const host, other = "net:[4026531840]", "net:[4026532999]"
	tests := []struct {
		name string
		ns   []string
		want bool
	}{
		{"no processes", nil, false},
		{"host namespace", []string{host, host}, false},
		{"own namespace", []string{other, other}, true},
		// A child left in the host's namespace makes the tree's traffic
		// inseparable from everyone else's.
		{"split tree", []string{other, host}, false},
	}
	for _, tc := range tests {
		if got := ownNamespace(host, tc.ns); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestExecutorNetLive: a process in the agent's namespace is not measured;
// one started by `unshare -n` (needs root) is, and its fresh namespace has
// moved no bytes.
func TestExecutorNetLive(t *testing.T) {
	if _, _, ok := executorNet([]int{os.Getpid()}); ok {
		t.Error("a process in the agent's own namespace counted as measured")
	}
	cmd := exec.Command("unshare", "-n", "sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("unshare: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	// unshare execs sleep in the same process once the namespace exists.
	var rx, tx uint64
	var ok bool
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if rx, tx, ok = executorNet([]int{cmd.Process.Pid}); ok || time.Now().After(deadline) {
			break
		}
	}
	if !ok {
		t.Skip("process never left the agent's namespace (unshare not permitted here)")
	}
	if rx != 0 || tx != 0 {
		t.Errorf("fresh namespace moved %d, %d bytes", rx, tx)
	}
}

// TestGroupStatsKeepsReapedChildren: an executor's CPU time must not fall
// when one of its processes exits and is reaped (cutime, cstime), or the
// master could not turn successive reports into a rate.
func TestGroupStatsKeepsReapedChildren(t *testing.T) {
	cmd := exec.Command("sh", "-c", `sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'; exec sleep 30`)
	if err := cmd.Start(); err != nil {
		t.Skipf("sh: %v", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var last float64
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := groupStats(cmd.Process.Pid)
		cpu := st.CpusUserTimeSecs + st.CpusSysTimeSecs
		if cpu < last {
			t.Fatalf("CPU time fell from %g to %g s", last, cpu)
		}
		last = cpu
		if st.Processes == 1 && cpu > 0 {
			return // the loop was reaped and the shell became sleep: its time stayed
		}
		if time.Now().After(deadline) {
			t.Fatalf("loop never finished: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
