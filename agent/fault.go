package agent

import (
	"os"

	"github.com/allot-sched/allot/api"
)

// diskBusyFault makes usage reports say the disks were busy all the time
// while a file exists (Config.FaultDiskBusyFile). Prophet's task backoff
// needs a disk that is busy yet delivers little; on a shared test machine
// a real collision is neither reliable nor kind to the other processes, so
// tests drive the signal instead. The counter stays cumulative and never
// falls: what was added stays added, so RatesBetween forms rates across the
// moments the file appears and goes.
type diskBusyFault struct {
	added  float64 // busy seconds added so far
	lastTS int64   // the previous report's timestamp
}

// apply adds the interval since the previous report, per counted disk (at
// least one), while path exists.
func (f *diskBusyFault) apply(path string, u *api.Usage) {
	if path == "" {
		return
	}
	if _, err := os.Stat(path); err == nil && f.lastTS > 0 && u.TimestampUnixNano > f.lastTS {
		if u.DiskDevices == 0 {
			u.DiskDevices = 1
		}
		f.added += float64(u.TimestampUnixNano-f.lastTS) / 1e9 * float64(u.DiskDevices)
	}
	f.lastTS = u.TimestampUnixNano
	u.DiskBusySeconds += f.added
}
