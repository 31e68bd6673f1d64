package eventlog

// Event is one line of an event log: a pointer to one of the structs below
// (or to Unknown, for a kind this package does not know).
type Event interface {
	// Kind is the "event" field: "task_end", "stage_completed", ...
	Kind() string
	// At is the "time" field, unix seconds.
	At() float64
	// stamp sets the "event" field to Kind() before the event is written,
	// so a writer never has to spell a kind.
	stamp()
}

// The kinds of event, as they appear in the "event" field.
const (
	KindApplicationStart   = "application_start"
	KindApplicationEnd     = "application_end"
	KindExecutorAdded      = "executor_added"
	KindExecutorRemoved    = "executor_removed"
	KindExecutorsRequested = "executors_requested"
	KindExecutorSample     = "executor_sample"
	KindExecutorStage      = "executor_stage"
	KindExecutorLaunched   = "executor_launched"
	KindExecutorTaskEnded  = "executor_task_ended"
	KindOffersDeclined     = "offers_declined"
	KindJobStart           = "job_start"
	KindJobEnd             = "job_end"
	KindStageSubmitted     = "stage_submitted"
	KindStageCompleted     = "stage_completed"
	KindTaskEnd            = "task_end"
)

// ApplicationStart opens every log.
type ApplicationStart struct {
	App      string `json:"app"`
	Event    string `json:"event"`
	EventLog string `json:"event_log"` // this log's path
	// InputBytes is the input size the application declared at start
	// (Config.InputBytes), for the demand predictor; absent if undeclared
	// (ApplicationEnd's input_bytes is what it actually read).
	InputBytes int64    `json:"input_bytes,omitempty"`
	Settings   Settings `json:"settings"`
	Time       float64  `json:"time"`
}

// Settings are the driver's configuration after defaults.
type Settings struct {
	BlockMemMB   int    `json:"block_mem_mb"`
	Cores        int    `json:"cores"`
	Dynamic      bool   `json:"dynamic"`
	Executors    int    `json:"executors"`
	Local        bool   `json:"local"`
	Master       string `json:"master"`
	MaxExecutors int    `json:"max_executors"`
	MemMB        int    `json:"mem_mb"`
	MinExecutors int    `json:"min_executors"`
}

// ApplicationEnd closes a log that ended cleanly.
type ApplicationEnd struct {
	DurationS  float64 `json:"duration_s"`
	Error      string  `json:"error,omitempty"` // the application's failure; absent on success
	Event      string  `json:"event"`
	InputBytes int64   `json:"input_bytes"` // bytes of the text files the application read
	// RecomputedPartitions counts cached partitions computed again after
	// they were lost with their executor; absent when 0.
	RecomputedPartitions int     `json:"recomputed_partitions,omitempty"`
	Success              bool    `json:"success"`
	Time                 float64 `json:"time"`
}

// ExecutorAdded: an executor registered with the driver.
type ExecutorAdded struct {
	Cores    int     `json:"cores"`
	Event    string  `json:"event"`
	Executor string  `json:"executor"`
	Host     string  `json:"host"`
	PID      int     `json:"pid"`
	Time     float64 `json:"time"`
	URL      string  `json:"url"`
}

// ExecutorRemoved: the driver forgot an executor (lost, or released by
// dynamic allocation) and the cached partitions it held.
type ExecutorRemoved struct {
	Event                string  `json:"event"`
	Executor             string  `json:"executor"`
	LostCachedPartitions int     `json:"lost_cached_partitions"`
	Reason               string  `json:"reason"`
	Time                 float64 `json:"time"`
}

// ExecutorsRequested: the scaling policy raised the executor target, after
// a task backlog or (iSpark) an executor's utilisation above h x capacity;
// Reason says which.
type ExecutorsRequested struct {
	Backlog int    `json:"backlog"` // tasks waiting for a slot
	Event   string `json:"event"`
	// Reason is the scaling rule that asked (elastic.Decision.Why);
	// omitted when empty, so older logs read the same.
	Reason string  `json:"reason,omitempty"`
	Target int     `json:"target"`
	Time   float64 `json:"time"`
}

// ExecutorSample is an executor's one-second utilisation sample, as its
// heartbeat carried it.
type ExecutorSample struct {
	BlockMem     int64   `json:"block_mem"`     // block manager bytes in memory
	BlockSpill   int64   `json:"block_spill"`   // block manager bytes on disk
	CachedBlocks int     `json:"cached_blocks"` // blocks the executor holds
	CPU          float64 `json:"cpu"`           // cores busy
	DiskBW       float64 `json:"disk_bw"`       // block-device B/s (/proc/self/io)
	Event        string  `json:"event"`
	Executor     string  `json:"executor"`
	FileBW       float64 `json:"file_bw"`   // file B/s the runtime read and wrote
	MemBytes     int64   `json:"mem_bytes"` // RSS
	NetBW        float64 `json:"net_bw"`    // socket B/s in+out
	Running      int     `json:"running"`   // tasks running at the sample's end
	Stages       []int   `json:"stages"`    // stages with a task running in the interval (null if none)
	Time         float64 `json:"time"`      // end of the sampled second
}

// ExecutorStage is one stage's time on one executor: task metric sums, and
// the peak and mean of the executor's samples that overlap the stage's first
// task start to last task end there. ConcurrentStages counts the samples
// shared with other stages (a sample is the whole process, so it cannot be
// split among stages).
type ExecutorStage struct {
	BytesRead         int64   `json:"bytes_read"`
	ConcurrentStages  int     `json:"concurrent_stages"`
	CPUMean           float64 `json:"cpu_mean"`
	CPUPeak           float64 `json:"cpu_peak"`
	DiskBWMean        float64 `json:"disk_bw_mean"`
	DiskBWPeak        float64 `json:"disk_bw_peak"`
	End               float64 `json:"end"`
	EndOffsetS        float64 `json:"end_offset_s,omitempty"` // End minus the executor's registration, s
	Event             string  `json:"event"`
	Executor          string  `json:"executor"`
	FileBWMean        float64 `json:"file_bw_mean"`
	FileBWPeak        float64 `json:"file_bw_peak"`
	MemMeanBytes      float64 `json:"mem_mean_bytes"`
	MemPeakBytes      float64 `json:"mem_peak_bytes"`
	NetBWMean         float64 `json:"net_bw_mean"`
	NetBWPeak         float64 `json:"net_bw_peak"`
	Samples           int     `json:"samples"`
	ShuffleFetchBytes int64   `json:"shuffle_fetch_bytes"`
	ShuffleWriteBytes int64   `json:"shuffle_write_bytes"`
	Stage             int     `json:"stage"`
	StageKey          string  `json:"stage_key,omitempty"` // the stage's key, stable across runs (StageSubmitted.Key)
	Start             float64 `json:"start"`
	StartOffsetS      float64 `json:"start_offset_s,omitempty"` // Start minus the executor's registration, s
	TaskCPUTimeS      float64 `json:"task_cpu_time_s"`
	TaskRunQueueS     float64 `json:"task_run_queue_s,omitempty"` // the tasks' threads runnable but waiting for a CPU
	Tasks             int     `json:"tasks"`
	Time              float64 `json:"time"`
}

// ExecutorLaunched: the Mesos backend launched an executor from an offer.
type ExecutorLaunched struct {
	Agent    string  `json:"agent"`
	Event    string  `json:"event"`
	Executor string  `json:"executor"`
	Host     string  `json:"host"`
	Time     float64 `json:"time"`
}

// ExecutorTaskEnded: an executor's Mesos task reached a terminal state.
type ExecutorTaskEnded struct {
	Event    string  `json:"event"`
	Executor string  `json:"executor"`
	Message  string  `json:"message"`
	Released bool    `json:"released"` // the driver had released it
	State    string  `json:"state"`    // TASK_KILLED, TASK_FAILED, ...
	Time     float64 `json:"time"`
}

// OffersDeclined: the Mesos backend declined offers it did not need.
type OffersDeclined struct {
	Event         string  `json:"event"`
	HeldS         float64 `json:"held_s"`
	Offers        int     `json:"offers"`
	RefuseSeconds float64 `json:"refuse_seconds"`
	Time          float64 `json:"time"`
}

// JobStart: an action started a job.
type JobStart struct {
	Action      string  `json:"action"` // collect, count, save, sample
	Event       string  `json:"event"`
	Partitions  int     `json:"partitions"`
	ResultStage int     `json:"result_stage"`
	Time        float64 `json:"time"`
}

// JobEnd: a job finished. DurationS is set on success, Error on failure.
type JobEnd struct {
	DurationS float64 `json:"duration_s,omitempty"`
	Error     string  `json:"error,omitempty"`
	Event     string  `json:"event"`
	Success   bool    `json:"success"`
	Time      float64 `json:"time"`
}

// StageSubmitted: a stage was submitted (again, if its outputs were lost).
type StageSubmitted struct {
	Event      string  `json:"event"`
	Key        string  `json:"key,omitempty"` // stable across runs of the same program; see framework's stageKey
	StageKind  string  `json:"kind"`          // shuffle_map or result
	Name       string  `json:"name"`
	Parents    []int   `json:"parents"` // parent stage ids, [] if none
	Partitions int     `json:"partitions"`
	Stage      int     `json:"stage"`
	Tasks      int     `json:"tasks"` // partitions it has to compute
	Time       float64 `json:"time"`
}

// StageCompleted: every partition of a stage is computed.
type StageCompleted struct {
	DurationS float64 `json:"duration_s"`
	End       float64 `json:"end"`
	Event     string  `json:"event"`
	Executors int     `json:"executors"` // executors that ran its tasks
	Name      string  `json:"name"`
	Stage     int     `json:"stage"`
	Start     float64 `json:"start"`
	Time      float64 `json:"time"`
}

// TaskEnd: a task attempt ended. The metric fields are nil (absent from the
// line) when the executor never answered; Error is set when Success is false.
type TaskEnd struct {
	Attempt           int      `json:"attempt"`
	BytesRead         *int64   `json:"bytes_read,omitempty"`
	CacheHit          *bool    `json:"cache_hit,omitempty"`
	CPUTimeS          *float64 `json:"cpu_time_s,omitempty"` // the task's own thread
	DurationS         *float64 `json:"duration_s,omitempty"`
	Error             string   `json:"error,omitempty"`
	Event             string   `json:"event"`
	Executor          string   `json:"executor"`
	Partition         int      `json:"partition"`
	RecordsOut        *int64   `json:"records_out,omitempty"`
	RunQueueS         *float64 `json:"run_queue_s,omitempty"` // the task's thread runnable but waiting for a CPU
	ShuffleFetchBytes *int64   `json:"shuffle_fetch_bytes,omitempty"`
	ShuffleWriteBytes *int64   `json:"shuffle_write_bytes,omitempty"`
	Stage             int      `json:"stage"`
	Success           bool     `json:"success"`
	Task              int64    `json:"task"`
	Time              float64  `json:"time"`
}

// TaskMetrics are the measured fields of a TaskEnd, set together.
type TaskMetrics struct {
	DurationS, CPUTimeS                               float64
	BytesRead, ShuffleWrite, ShuffleFetch, RecordsOut int64
	CacheHit                                          bool
	// RunQueueS is written only when measured (non-zero).
	RunQueueS float64
}

// SetMetrics fills the task's metric fields.
func (e *TaskEnd) SetMetrics(m TaskMetrics) {
	e.DurationS, e.CPUTimeS = &m.DurationS, &m.CPUTimeS
	e.BytesRead, e.ShuffleWriteBytes, e.ShuffleFetchBytes, e.RecordsOut = &m.BytesRead, &m.ShuffleWrite, &m.ShuffleFetch, &m.RecordsOut
	e.CacheHit = &m.CacheHit
	if m.RunQueueS > 0 {
		e.RunQueueS = &m.RunQueueS
	}
}

// Unknown is a line of a kind this package does not know (a newer writer's):
// readers skip or inspect it instead of failing.
type Unknown struct {
	Event string
	Time  float64
	Raw   []byte // the whole line
}

func (e *ApplicationStart) Kind() string   { return KindApplicationStart }
func (e *ApplicationEnd) Kind() string     { return KindApplicationEnd }
func (e *ExecutorAdded) Kind() string      { return KindExecutorAdded }
func (e *ExecutorRemoved) Kind() string    { return KindExecutorRemoved }
func (e *ExecutorsRequested) Kind() string { return KindExecutorsRequested }
func (e *ExecutorSample) Kind() string     { return KindExecutorSample }
func (e *ExecutorStage) Kind() string      { return KindExecutorStage }
func (e *ExecutorLaunched) Kind() string   { return KindExecutorLaunched }
func (e *ExecutorTaskEnded) Kind() string  { return KindExecutorTaskEnded }
func (e *OffersDeclined) Kind() string     { return KindOffersDeclined }
func (e *JobStart) Kind() string           { return KindJobStart }
func (e *JobEnd) Kind() string             { return KindJobEnd }
func (e *StageSubmitted) Kind() string     { return KindStageSubmitted }
func (e *StageCompleted) Kind() string     { return KindStageCompleted }
func (e *TaskEnd) Kind() string            { return KindTaskEnd }
func (e *Unknown) Kind() string            { return e.Event }

func (e *ApplicationStart) At() float64   { return e.Time }
func (e *ApplicationEnd) At() float64     { return e.Time }
func (e *ExecutorAdded) At() float64      { return e.Time }
func (e *ExecutorRemoved) At() float64    { return e.Time }
func (e *ExecutorsRequested) At() float64 { return e.Time }
func (e *ExecutorSample) At() float64     { return e.Time }
func (e *ExecutorStage) At() float64      { return e.Time }
func (e *ExecutorLaunched) At() float64   { return e.Time }
func (e *ExecutorTaskEnded) At() float64  { return e.Time }
func (e *OffersDeclined) At() float64     { return e.Time }
func (e *JobStart) At() float64           { return e.Time }
func (e *JobEnd) At() float64             { return e.Time }
func (e *StageSubmitted) At() float64     { return e.Time }
func (e *StageCompleted) At() float64     { return e.Time }
func (e *TaskEnd) At() float64            { return e.Time }
func (e *Unknown) At() float64            { return e.Time }

func (e *ApplicationStart) stamp()   { e.Event = e.Kind() }
func (e *ApplicationEnd) stamp()     { e.Event = e.Kind() }
func (e *ExecutorAdded) stamp()      { e.Event = e.Kind() }
func (e *ExecutorRemoved) stamp()    { e.Event = e.Kind() }
func (e *ExecutorsRequested) stamp() { e.Event = e.Kind() }
func (e *ExecutorSample) stamp()     { e.Event = e.Kind() }
func (e *ExecutorStage) stamp()      { e.Event = e.Kind() }
func (e *ExecutorLaunched) stamp()   { e.Event = e.Kind() }
func (e *ExecutorTaskEnded) stamp()  { e.Event = e.Kind() }
func (e *OffersDeclined) stamp()     { e.Event = e.Kind() }
func (e *JobStart) stamp()           { e.Event = e.Kind() }
func (e *JobEnd) stamp()             { e.Event = e.Kind() }
func (e *StageSubmitted) stamp()     { e.Event = e.Kind() }
func (e *StageCompleted) stamp()     { e.Event = e.Kind() }
func (e *TaskEnd) stamp()            { e.Event = e.Kind() }
func (e *Unknown) stamp()            {}

// newEvent returns a zero event of a known kind, or nil.
func newEvent(kind string) Event {
	switch kind {
	case KindApplicationStart:
		return &ApplicationStart{}
	case KindApplicationEnd:
		return &ApplicationEnd{}
	case KindExecutorAdded:
		return &ExecutorAdded{}
	case KindExecutorRemoved:
		return &ExecutorRemoved{}
	case KindExecutorsRequested:
		return &ExecutorsRequested{}
	case KindExecutorSample:
		return &ExecutorSample{}
	case KindExecutorStage:
		return &ExecutorStage{}
	case KindExecutorLaunched:
		return &ExecutorLaunched{}
	case KindExecutorTaskEnded:
		return &ExecutorTaskEnded{}
	case KindOffersDeclined:
		return &OffersDeclined{}
	case KindJobStart:
		return &JobStart{}
	case KindJobEnd:
		return &JobEnd{}
	case KindStageSubmitted:
		return &StageSubmitted{}
	case KindStageCompleted:
		return &StageCompleted{}
	case KindTaskEnd:
		return &TaskEnd{}
	case KindExecutorsPlaced:
		return &ExecutorsPlaced{}
	case KindTaskBackoff:
		return &TaskBackoff{}
	case KindExecutorUtilisation:
		return &ExecutorUtilisation{}
	case KindPartitionsMoved:
		return &PartitionsMoved{}
	}
	return nil
}

var (
	_ Event = (*ApplicationStart)(nil)
	_ Event = (*ApplicationEnd)(nil)
	_ Event = (*ExecutorAdded)(nil)
	_ Event = (*ExecutorRemoved)(nil)
	_ Event = (*ExecutorsRequested)(nil)
	_ Event = (*ExecutorSample)(nil)
	_ Event = (*ExecutorStage)(nil)
	_ Event = (*ExecutorLaunched)(nil)
	_ Event = (*ExecutorTaskEnded)(nil)
	_ Event = (*OffersDeclined)(nil)
	_ Event = (*JobStart)(nil)
	_ Event = (*JobEnd)(nil)
	_ Event = (*StageSubmitted)(nil)
	_ Event = (*StageCompleted)(nil)
	_ Event = (*TaskEnd)(nil)
	_ Event = (*Unknown)(nil)
)
