package operator

// UnreachableAgent is an agent the master marked unreachable, as /state's
// unreachable_agents lists it (an allot addition: Mesos's /state counts
// them in unreachable_slaves only). State is always "unreachable", so that
// a client merging this list with slaves shows every agent with its state.
type UnreachableAgent struct {
	ID       string `json:"id"`
	Hostname string `json:"hostname"`
	PID      string `json:"pid"`
	State    string `json:"state"`
	// UnreachableTime is when it was marked, Unix seconds.
	UnreachableTime float64 `json:"unreachable_time"`
}
