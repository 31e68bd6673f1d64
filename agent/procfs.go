package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// This file parses the host-wide counters of /proc into the fields of
// api.Usage. Parsers take the file's bytes and a rule for which devices
// count, so tests feed them fixtures (testdata/) and a fake /sys.
//
// Which devices count. A byte written by an application to an md RAID or a
// dm (LVM, dm-crypt, multipath) device appears in /proc/diskstats once on
// that device and again on every member it lands on (twice on a RAID1
// write, plus parity on RAID5); a partition's I/O is also in its whole
// disk's line; a loop device's I/O is also in the disk holding its backing
// file. Summing every line double counts. The rule: count physical whole
// disks only, the devices with a "device" entry under /sys/block (sd*,
// nvme*n*, vd*, xvd*, mmcblk*, ...); skip partitions (not listed in
// /sys/block at all) and virtual block devices (md, dm, loop, zram, ram,
// nbd: no "device" entry). Physical disks rather than the top of the stack,
// because
//   - disk_bw, the bandwidth a node advertises, is a limit of its hardware
//     (the paper's r_max, w_max "fixed by the physical limits"): RAID1's
//     doubled writes really load the disks;
//   - io_ticks is only meaningful on request-based devices: md reports
//     none on many kernels and dm's is an average over unlike members, so
//     device busy time must come from the disks themselves;
//   - I/O that bypasses md/dm (a plain partition beside the array) is
//     still seen.
//
// Without a readable /sys (some sandboxes), a name rule stands in:
// virtual prefixes are skipped and a name that is another listed device's
// name plus digits (sda1, nvme0n1p1, mmcblk0p2) is a partition.
//
// Network interfaces follow the same rule for the same reason: a bridge,
// veth, bond or ifb device carries bytes that also cross a physical NIC, so
// only interfaces with a "device" entry under /sys/class/net count. When a
// host has none (an agent inside a container sees only its veth), every
// interface but lo counts, as before.

// cpuTimes is the "cpu" line of /proc/stat in seconds.
type cpuTimes struct {
	user, system        float64
	idle, iowait, total float64
}

// parseCPUStat reads the aggregate "cpu" line: user nice system idle iowait
// irq softirq steal guest guest_nice, in USER_HZ ticks. total sums the
// first eight; guest and guest_nice are already counted in user and nice.
func parseCPUStat(b []byte) (cpuTimes, bool) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[0] != "cpu" {
			continue
		}
		var t [8]float64
		for i := 0; i < len(t) && i+1 < len(f); i++ {
			n, _ := strconv.ParseUint(f[i+1], 10, 64)
			t[i] = float64(n) / clockTicks
		}
		c := cpuTimes{user: t[0], system: t[2], idle: t[3], iowait: t[4]}
		for _, v := range t {
			c.total += v
		}
		return c, true
	}
	return cpuTimes{}, false
}

// diskTotals sums the counted devices of /proc/diskstats.
type diskTotals struct {
	readBytes, writeBytes uint64
	busySeconds           float64 // io_ticks
	devices               uint32
}

// diskSectorBytes: diskstats counts 512-byte sectors whatever the
// device's own sector size.
const diskSectorBytes = 512

// parseDiskstats sums sectors read (field 6), sectors written (field 10)
// and io_ticks (field 13, ms) over the devices counted says count.
func parseDiskstats(b []byte, counted func(name string) bool) diskTotals {
	var d diskTotals
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 13 || !counted(f[2]) {
			continue
		}
		r, _ := strconv.ParseUint(f[5], 10, 64)
		w, _ := strconv.ParseUint(f[9], 10, 64)
		ticks, _ := strconv.ParseUint(f[12], 10, 64)
		d.readBytes += r * diskSectorBytes
		d.writeBytes += w * diskSectorBytes
		d.busySeconds += float64(ticks) / 1000
		d.devices++
	}
	return d
}

// diskNames lists the device names of /proc/diskstats.
func diskNames(b []byte) []string {
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 3 {
			names = append(names, f[2])
		}
	}
	return names
}

// hardwareBacked returns the names in dir (/sys/block or /sys/class/net)
// that have a "device" entry, i.e. sit on hardware (or a hypervisor's
// virtio) rather than on other devices. ok is false when dir is unreadable.
func hardwareBacked(dir string) (names map[string]bool, ok bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	names = map[string]bool{}
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "device")); err == nil {
			names[e.Name()] = true
		}
	}
	return names, true
}

// physicalDisks is the counting rule for /proc/diskstats names: from
// sysBlock (normally /sys/block) when it is readable, else by name.
func physicalDisks(sysBlock string, diskstats []byte) func(string) bool {
	if hw, ok := hardwareBacked(sysBlock); ok && len(hw) > 0 {
		// sysfs writes '/' in names (cciss/c0d0) as '!'.
		return func(name string) bool { return hw[strings.ReplaceAll(name, "/", "!")] }
	}
	return diskNameRule(diskNames(diskstats))
}

// virtualDiskPrefixes are block devices stacked on others or on memory.
var virtualDiskPrefixes = []string{"loop", "ram", "zram", "md", "dm-", "nbd"}

// diskNameRule is the fallback rule: not virtual, and not a partition of
// another listed device (its name plus digits, or plus "p" and digits).
func diskNameRule(names []string) func(string) bool {
	listed := map[string]bool{}
	for _, n := range names {
		listed[n] = true
	}
	return func(name string) bool {
		for _, p := range virtualDiskPrefixes {
			if strings.HasPrefix(name, p) {
				return false
			}
		}
		base := strings.TrimRight(name, "0123456789")
		if base == name {
			return true
		}
		return !listed[base] && !listed[strings.TrimSuffix(base, "p")]
	}
}

// netTotals sums receive and transmit bytes of /proc/net/dev over the
// interfaces counted says count (lo never counts).
func parseNetDev(b []byte, counted func(name string) bool) (rx, tx uint64) {
	for _, line := range strings.Split(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "lo" || !counted(name) {
			continue
		}
		f := strings.Fields(rest)
		if len(f) >= 9 {
			r, _ := strconv.ParseUint(f[0], 10, 64)
			t, _ := strconv.ParseUint(f[8], 10, 64)
			rx += r
			tx += t
		}
	}
	return rx, tx
}

// physicalNICs is the counting rule for /proc/net/dev: interfaces with a
// device under sysClassNet, or every interface when none has one.
func physicalNICs(sysClassNet string) func(string) bool {
	if hw, ok := hardwareBacked(sysClassNet); ok && len(hw) > 0 {
		return func(name string) bool { return hw[name] }
	}
	return func(string) bool { return true }
}
