// Package master is allot's master: the Mesos v1 scheduler API at
// /api/v1/scheduler, the operator API at /api/v1 with /state, /health and
// /metrics, the agent protocol at /api/v1/allot/agent, the offer lifecycle
// and status-update routing, all on top of the registry (agents,
// frameworks, tasks, config) that is applied through hashicorp/raft.
//
// Concurrency: one mutex (Master.mu) guards the live state and the
// allocator, which is not safe for concurrent use. HTTP handlers decode and
// validate outside the lock, take it for the state change, and never block
// under it: events to frameworks and agents are queued on per-connection
// streams (api.Stream) whose own goroutines write them, and registry
// commands are proposed to raft without waiting except where the caller's
// answer depends on durability (a framework's SUBSCRIBED).
//
// Offers are leader-local and never replicated; after a restart the master
// rebuilds its allocator from the registry, agents re-register with the
// tasks they run, and frameworks re-subscribe within their failover timeout.
package master
