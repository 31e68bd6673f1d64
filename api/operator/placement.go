package operator

// Unplaced is the allocator's account of why a framework was offered
// nothing lately (allot's own; Mesos has no such field): /state shows it
// per framework once it went a few cycles without an offer, and
// GET /explain?framework_id=ID&format=json answers it at any time.
type Unplaced struct {
	FrameworkID string `json:"framework_id,omitempty"`
	// Reason is one of inactive, suppressed, demand_met, no_agents,
	// too_big, quota_limit, no_room, filtered, waiting.
	Reason string `json:"reason"`
	// Dimension is the resource in the way ("cpus"), where one is.
	Dimension string `json:"dimension,omitempty"`
	// Never is true when no registered agent could ever run the
	// framework's declared task: it is larger than every agent's total.
	Never bool `json:"never,omitempty"`
	// IdleCycles counts the allocation cycles since its last offer.
	IdleCycles int64  `json:"idle_cycles"`
	Message    string `json:"message"`
}
