package operator

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
)

// State is GET /state.
type State struct {
	ActivatedSlaves     int         `json:"activated_slaves"`
	Allocator           Allocator   `json:"allocator"`
	AllotVersion        string      `json:"allot_version"` // allot's own; Version is the Mesos API's
	CompletedFrameworks []Framework `json:"completed_frameworks"`
	Frameworks          []Framework `json:"frameworks"`
	Hostname            string      `json:"hostname"`
	ID                  string      `json:"id"`
	Leader              string      `json:"leader"`
	PID                 string      `json:"pid"`
	// Pressure is present when the master reclaims (--reclaim).
	Pressure  *Pressure `json:"pressure,omitempty"`
	Slaves    []Agent   `json:"slaves"`
	StartTime float64   `json:"start_time"` // Unix seconds
	// UnreachableAgents lists the agents marked unreachable;
	// UnreachableSlaves counts them (Mesos's field).
	UnreachableAgents []UnreachableAgent `json:"unreachable_agents,omitempty"`
	UnreachableSlaves int                `json:"unreachable_slaves"`
	Version           string             `json:"version"`
}

// Allocator is the allocation policy in force.
type Allocator struct {
	AgentSelection string `json:"agent_selection"`
	Mode           string `json:"mode"`
	Sorter         string `json:"sorter"`
}

// Task is a task as /state shows it.
type Task struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	FrameworkID string             `json:"framework_id"`
	ExecutorID  string             `json:"executor_id"`
	SlaveID     string             `json:"slave_id"`
	State       string             `json:"state"`
	Resources   map[string]float64 `json:"resources"`
	// Healthy is the task's last health check result, absent when the
	// task has no health check or none has reported yet.
	Healthy *bool `json:"healthy,omitempty"`
	// Statuses is the task's state history, oldest first (Mesos's
	// statuses); reason, message and source are allot's additions.
	Statuses []TaskStatus `json:"statuses"`
	// Container is the task's own ContainerInfo (Mesos's container);
	// ExecutorContainer, allot's, its custom executor's, where it runs
	// (container.go).
	Container         *Container `json:"container,omitempty"`
	ExecutorContainer *Container `json:"executor_container,omitempty"`
}

// TaskStatus is one entry of a task's state history.
type TaskStatus struct {
	State     string  `json:"state"`
	Timestamp float64 `json:"timestamp"`
	Healthy   *bool   `json:"healthy,omitempty"`
	Reason    string  `json:"reason,omitempty"`
	Message   string  `json:"message,omitempty"`
	Source    string  `json:"source,omitempty"`
	// ContainerStatus is the task's container and its networks' addresses
	// (network.go), for a task on CNI networks.
	ContainerStatus *ContainerStatus `json:"container_status,omitempty"`
}

// Framework is a framework as /state shows it (completed_frameworks too:
// their id and completed tasks).
type Framework struct {
	ID            string             `json:"id"`
	Name          string             `json:"name"`
	Role          string             `json:"role"`
	Active        bool               `json:"active"`
	Connected     bool               `json:"connected"`
	FailoverTO    float64            `json:"failover_timeout"`
	UsedResources map[string]float64 `json:"used_resources"`
	Tasks         []Task             `json:"tasks"`
	// UnreachableTasks are a partition-aware framework's tasks on
	// unreachable agents, kept apart from Tasks as Mesos keeps them.
	UnreachableTasks []Task `json:"unreachable_tasks"`
	CompletedTasks   []Task `json:"completed_tasks"`
	OfferCount       int    `json:"offers"`
	// Share is the allocator's weighted dominant share a_n / (phi C).
	Share float64 `json:"dominant_share"`
	// Filters are the framework's live decline filters.
	Filters []Filter `json:"filters"`
	JobType string   `json:"job_type,omitempty"`
	// JobSize is the head job last declared (labels or REQUEST).
	JobSize *api.JobSize `json:"job_size,omitempty"`
	// Unplaced says why it was offered nothing in the last cycles;
	// absent while offers reach it.
	Unplaced *Unplaced `json:"unplaced,omitempty"`
}

// Agent is an agent as /state shows it.
type Agent struct {
	ID        string             `json:"id"`
	Hostname  string             `json:"hostname"`
	PID       string             `json:"pid"`
	Active    bool               `json:"active"`
	Resources map[string]float64 `json:"resources"`
	Used      map[string]float64 `json:"used_resources"`
	Usage     *api.Usage         `json:"usage,omitempty"`
	// Rates is nil before the agent's second usage report.
	Rates     *Rates `json:"usage_rates,omitempty"`
	Isolation string `json:"isolation,omitempty"`
	// ReservedResources is what of the agent is reserved, by the role of
	// the reservation (the innermost of a refined stack), and
	// ReservedResourcesFull the same resources exactly (reservations,
	// persistent volumes), as Mesos's /state has them; absent when
	// nothing is reserved.
	ReservedResources     map[string]map[string]float64 `json:"reserved_resources,omitempty"`
	ReservedResourcesFull map[string][]mesos.Resource   `json:"reserved_resources_full,omitempty"`
	// Deactivated and DrainInfo are Mesos's: no offers are made of a
	// deactivated agent; a drained one's tasks are killed.
	Deactivated bool       `json:"deactivated"`
	DrainInfo   *DrainInfo `json:"drain_info,omitempty"`
	// State is allot's summary: active, draining, drained, deactivated,
	// down (its machine is DOWN for maintenance) or unreachable.
	State string `json:"state"`
}

// DrainInfo is Mesos's drain_info of an agent (DRAIN_AGENT).
type DrainInfo struct {
	State  string      `json:"state"` // DRAINING or DRAINED
	Config DrainConfig `json:"config"`
}

// DrainConfig is the drain's max_grace_period and mark_gone.
type DrainConfig struct {
	MaxGracePeriod *Duration `json:"max_grace_period,omitempty"`
	MarkGone       bool      `json:"mark_gone,omitempty"`
}

// Duration is Mesos's DurationInfo.
type Duration struct {
	Nanoseconds int64 `json:"nanoseconds"`
}

// Filter is a decline filter.
type Filter struct {
	AgentID   string             `json:"agent_id"`
	Until     float64            `json:"until"` // Unix seconds
	Resources map[string]float64 `json:"resources"`
}

// Rates are an agent's usage rates over its last report interval.
type Rates struct {
	Seconds       float64 `json:"seconds"`
	CPUMeasured   bool    `json:"cpu_measured"`
	CPU           float64 `json:"cpu"`
	IOWait        float64 `json:"iowait"`
	DiskReadMBps  float64 `json:"disk_read_mbps"`
	DiskWriteMBps float64 `json:"disk_write_mbps"`
	NetRxMBps     float64 `json:"net_rx_mbps"`
	NetTxMBps     float64 `json:"net_tx_mbps"`
	DiskBusy      float64 `json:"disk_busy"`
	// Executors are the per-executor rates over the same interval (each
	// executor's own disk and, where measured, network throughput), so a
	// framework reading /state can tell which of its executors a busy
	// device serves (Prophet's task backoff).
	Executors []ExecRates `json:"executors,omitempty"`
}

// ExecRates is one executor's share of an agent's interval.
type ExecRates struct {
	FrameworkID   string  `json:"framework_id"`
	ExecutorID    string  `json:"executor_id"`
	Reset         bool    `json:"reset,omitempty"`
	CPUCores      float64 `json:"cpu_cores"`
	DiskReadMBps  float64 `json:"disk_read_mbps"`
	DiskWriteMBps float64 `json:"disk_write_mbps"`
	NetMeasured   bool    `json:"net_measured"`
	NetRxMBps     float64 `json:"net_rx_mbps"`
	NetTxMBps     float64 `json:"net_tx_mbps"`
}

// Pressure is GET /pressure (and /state's pressure): who starves and what
// the master asked back.
type Pressure struct {
	Reclaim       bool           `json:"reclaim"`
	Starving      []Starving     `json:"starving"`
	InverseOffers []InverseOffer `json:"inverse_offers"`
}

// Starving is a framework below its fair share.
type Starving struct {
	FrameworkID string             `json:"framework_id"`
	Role        string             `json:"role"`
	Share       float64            `json:"share"`
	FairShare   float64            `json:"fair_share"`
	Need        map[string]float64 `json:"need,omitempty"`
	Reason      string             `json:"reason"`
}

// InverseOffer is an outstanding inverse offer.
type InverseOffer struct {
	ID          string             `json:"id"`
	FrameworkID string             `json:"framework_id"`
	AgentID     string             `json:"agent_id"`
	Resources   map[string]float64 `json:"resources"`
	Reason      string             `json:"reason"`
	Sent        float64            `json:"sent"` // Unix seconds
}
