package eventlog

// Events of iSpark's elastic scale-down: the per-epoch
// utilisation the iController decides on, and the cached partitions a
// giver hands to a receiver before it is released.
const (
	KindExecutorUtilisation = "executor_utilisation"
	KindPartitionsMoved     = "partitions_moved"
)

// ExecutorUtilisation is one executor's utilisation over one monitoring
// epoch: CPU demanded over reserved and memory used over reserved (RSS /
// the executor's memory), from its own /proc samples and its tasks'
// threads, and UMax, the highest utilisation (by the policy's factor) of a
// completed stage on it so far (0 before any). CPU demanded is the cores
// busy plus CPUWait, the cores its tasks' threads wanted but waited for on
// a run queue (other work on the host starving them), per core reserved:
// on a host with CPU to spare CPUWait is 0 and CPU is cores busy / cores;
// CPU - CPUWait is that plain figure anywhere. CPUWait is absent in logs
// written before it was measured.
type ExecutorUtilisation struct {
	CPU      float64 `json:"cpu"`
	CPUWait  float64 `json:"cpu_wait,omitempty"`
	EpochS   float64 `json:"epoch_s"`
	Event    string  `json:"event"`
	Executor string  `json:"executor"`
	Mem      float64 `json:"mem"`
	Samples  int     `json:"samples"` // samples the epoch averaged
	Time     float64 `json:"time"`
	UMax     float64 `json:"umax"`
}

// PartitionsMoved is one Move of a handoff as it ended: Count of the
// Requested partitions the receiver confirmed holding (the driver reads
// them there from now on), their Bytes, and how long it took. Count below
// Requested means the giver died or the receiver could not take them: the
// rest are recomputed from lineage if read again.
type PartitionsMoved struct {
	Bytes     int64   `json:"bytes"`
	Count     int     `json:"count"`
	DurationS float64 `json:"duration_s"`
	Event     string  `json:"event"`
	Evicted   int     `json:"evicted"` // receiver partitions spilled to disk first
	From      string  `json:"from"`
	Requested int     `json:"requested"`
	Time      float64 `json:"time"`
	To        string  `json:"to"`
}

func (e *ExecutorUtilisation) Kind() string { return KindExecutorUtilisation }
func (e *PartitionsMoved) Kind() string     { return KindPartitionsMoved }
func (e *ExecutorUtilisation) At() float64  { return e.Time }
func (e *PartitionsMoved) At() float64      { return e.Time }
func (e *ExecutorUtilisation) stamp()       { e.Event = e.Kind() }
func (e *PartitionsMoved) stamp()           { e.Event = e.Kind() }

var (
	_ Event = (*ExecutorUtilisation)(nil)
	_ Event = (*PartitionsMoved)(nil)
)
