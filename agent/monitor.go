package agent

import (
	"os"
	"strconv"
	"strings"
	"time"
)

const clockTicks = 100 // USER_HZ on Linux

// groupStats sums CPU time and RSS over the processes in pgid's group.
func groupStats(pgid int) procStats {
	st := procStats{Timestamp: float64(time.Now().UnixNano()) / 1e9}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return st
	}
	page := uint64(os.Getpagesize())
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
		f := strings.Fields(s[i+1:])
		// fields after comm: state(0) ppid(1) pgrp(2) ... utime(11) stime(12) ... rss(21)
		if len(f) < 22 {
			continue
		}
		if pg, _ := strconv.Atoi(f[2]); pg != pgid && pid != pgid {
			continue
		}
		ut, _ := strconv.ParseUint(f[11], 10, 64)
		stt, _ := strconv.ParseUint(f[12], 10, 64)
		rss, _ := strconv.ParseUint(f[21], 10, 64)
		st.CpusUserTimeSecs += float64(ut) / clockTicks
		st.CpusSysTimeSecs += float64(stt) / clockTicks
		st.MemRSSBytes += rss * page
		st.Processes++
	}
	return st
}
