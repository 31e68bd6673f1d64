package framework

import (
	"log"
	"sync"

	"github.com/allot-sched/allot/framework/iothrottle"
)

// ioLimits are this process's I/O buckets: an executor started by an agent
// with --throttle-io shares its agent's disk_bw and net_bw with the agent's
// other executors (framework/iothrottle). A driver, a local executor, or an
// executor of an agent without the flag has none: nil buckets, no change.
var ioLimits = sync.OnceValue(func() iothrottle.Limits {
	l, err := iothrottle.FromEnv()
	if err != nil {
		log.Printf("executor: I/O not throttled: %v", err)
	}
	return l
})
