package agent

import (
	"path/filepath"
	"strconv"

	"github.com/allot-sched/allot/resources"
)

// The environment of Config.ThrottleIO, read by framework/iothrottle
// (FromEnv; the names are its EnvDir, EnvDiskBW and EnvNetBW: the agent
// may not import the framework library, so they are spelled twice).
const (
	envThrottleDir = "ALLOT_IO_THROTTLE_DIR"
	envDiskBW      = "ALLOT_IO_DISK_BW"
	envNetBW       = "ALLOT_IO_NET_BW"
)

// throttleEnv tells an executor where this agent's buckets are and how
// fast they fill: the agent's advertised bandwidths, all executors
// together. Nothing without ThrottleIO, or for a bandwidth not advertised.
func (a *Agent) throttleEnv() []string {
	if !a.cfg.ThrottleIO {
		return nil
	}
	env := []string{envThrottleDir + "=" + filepath.Join(a.cfg.WorkDir, "io-throttle")}
	for _, b := range []struct {
		name string
		kind resources.Kind
	}{{envDiskBW, resources.DiskBW}, {envNetBW, resources.NetBW}} {
		if v := a.total.Scalars[b.kind].Units(); v > 0 {
			env = append(env, b.name+"="+strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	return env
}
