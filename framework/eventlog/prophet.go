package eventlog

// The events of Prophet's framework side: where the placement
// put executors and why, and when task backoff started and lifted.
const (
	KindExecutorsPlaced = "executors_placed"
	KindTaskBackoff     = "task_backoff"
)

// ExecutorsPlaced: with --placement prophet, the Mesos backend held offers
// on more agents than it needed executors and chose these agents, best
// Prophet score (lowest) first.
type ExecutorsPlaced struct {
	Agents  []string  `json:"agents"`
	Event   string    `json:"event"`
	Offered int       `json:"offered_agents"` // distinct agents it held offers on
	Scores  []float64 `json:"scores"`
	Time    float64   `json:"time"`
}

// TaskBackoff: with --backoff, an executor was backed off (On) because its
// agent's disk or network delivered less than Trigger x capacity while
// busy, or its backoff lifted (!On) after Hold rounds without that.
type TaskBackoff struct {
	Agent     string  `json:"agent"`
	Capacity  float64 `json:"capacity_mbps,omitempty"`
	Delivered float64 `json:"delivered_mbps,omitempty"`
	Device    string  `json:"device,omitempty"` // disk_bw or net_bw (On only)
	Event     string  `json:"event"`
	Executor  string  `json:"executor"`
	On        bool    `json:"on"`
	Time      float64 `json:"time"`
}

func (e *ExecutorsPlaced) Kind() string { return KindExecutorsPlaced }
func (e *TaskBackoff) Kind() string     { return KindTaskBackoff }
func (e *ExecutorsPlaced) At() float64  { return e.Time }
func (e *TaskBackoff) At() float64      { return e.Time }
func (e *ExecutorsPlaced) stamp()       { e.Event = e.Kind() }
func (e *TaskBackoff) stamp()           { e.Event = e.Kind() }

var (
	_ Event = (*ExecutorsPlaced)(nil)
	_ Event = (*TaskBackoff)(nil)
)
