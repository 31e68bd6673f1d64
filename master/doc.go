// Package master is allot's master: the Mesos v1 scheduler API at
// /api/v1/scheduler, the operator API at /api/v1 with /state, /health and
// /metrics, the agent protocol at /api/v1/allot/agent, the offer lifecycle
// and status-update routing, all on top of the registry (agents,
// frameworks, tasks, config; package registry) that is applied through
// hashicorp/raft.
//
// Concurrency: one mutex (Master.mu) guards the live state and the
// allocator, which is not safe for concurrent use. HTTP handlers decode and
// validate outside the lock, take it for the state change, and never block
// under it: events to frameworks and agents are queued on per-connection
// streams (api.Stream) whose own goroutines write them, and registry
// commands are proposed to raft without waiting except where the caller's
// answer depends on durability (a framework's SUBSCRIBED). A function that
// needs m.mu held ends in Locked or says "Caller holds m.mu"; one that takes
// it says "Takes m.mu". Scheduler calls and agent calls do not take m.mu one
// by one: they queue on a lock-free list and one caller runs a batch of them
// under a single acquisition (underLock, combine.go), because hundreds of
// frameworks answering the same OFFERS event otherwise queue on the mutex.
//
// Allocator calls whose error no client sees go through allocOK, which logs
// the error with the ids involved and counts it in
// allot_master_allocator_errors_total{op}.
//
// Files follow the lifecycle of what they manage:
//
//	master.go      Config, New, Start/Stop, the Clock
//	leadership.go  election, rebuilding live state from the registry
//	state.go       live-state types (agents, frameworks, tasks, offers)
//	scheduler.go   the scheduler API: HTTP, call validation and dispatch
//	acceptplan.go  ACCEPT's plan: its tasks validated before anything
//	               changes; one that cannot run is TASK_ERROR (a group's
//	               every task REASON_TASK_GROUP_INVALID), the rest launch
//	acceptdrop.go  ACCEPT's answers by status update, as Mesos: invalid
//	               offers fail its tasks TASK_LOST / TASK_DROPPED
//	               (REASON_INVALID_OFFERS); the call is still 202
//	version.go     the Mesos API version clients read, allot's beside it
//	frameworks.go  subscribe, failover, update and removal of frameworks
//	offers.go      allocation cycle, offer table, rescind, ACCEPT's launch
//	allocpace.go   spacing the cycles that calls trigger
//	combine.go     running scheduler and agent calls in batches under m.mu
//	tasksbyagent.go the tasks on each agent (re-registration, agent loss)
//	signals.go     wire data -> allocator events (REQUEST, usage reports as
//	               rates, the allot.job_type FrameworkInfo label)
//	jobsize.go     job sizes for fsp/fspy: the allot.job_* FrameworkInfo
//	               labels (SUBSCRIBE, UPDATE_FRAMEWORK) and the allot.job
//	               REQUEST pseudo-resource -> the JobSize signal, 400 naming the
//	               key, replicated in the framework record and declared
//	               again by a new leader after the virtual cluster's restore
//	agentproto.go  the agent protocol: registration, updates, agent loss
//	finality.go    a task's end is final: an update of a task already over
//	               is acknowledged to the agent, not forwarded; a reported
//	               task whose end the framework heard is killed
//	history.go     the leader's completed tasks (bounded as the registry's,
//	               rebuilt from it on election) and removed agent ids,
//	               refused when they come back
//	partition.go   partition awareness: a lost agent marked unreachable
//	               (TASK_UNREACHABLE to PARTITION_AWARE frameworks, TASK_LOST
//	               to others, FAILURE to all), its return, MARK_AGENT_GONE,
//	               reconciliation's answers and the unreachable list's bounds
//	events.go      operator API subscribers and the event fan-out
//	routes.go      the route table: every endpoint's method, path and
//	               authentication class; the mux is built from it alone
//	operator.go    the operator API and /state (its JSON: package api/operator)
//	files.go       /files/* proxied to the agent holding the sandbox, and
//	               /explain (the allocator's reason for a framework, agent)
//	sorter.go      switching sorter, agent selection and mode at runtime,
//	               replicated (GET/POST /api/v1/allot/sorter)
//	timelines.go   GET /timelines: the agents' predicted availability of
//	               disk_bw and net_bw (Prophet's Fig. 4) from the allocator's
//	               gang model, all agents or ?agent_id=; capacities only
//	               (modelled: false) under sorters that keep no timelines.
//	               Frameworks score their own placement against it.
//	metrics.go     Prometheus series
//	raft.go, cluster.go  replicating the registry through raft, holding
//	               calls through an election, and 307s under --redirect
//	forward.go     a follower forwards leader-only calls (streams included)
//	               to the leader, ending forwarded streams on a leader change
//	policy.go      replicating the allocator's policy-model state (POLICY_SET),
//	               restoring it on election, GET /api/v1/allot/policy
//	reservations.go each agent's exact Mesos resources (static and dynamic
//	               reservations, persistent volumes), replicated
//	               (AGENT_RESOURCES_SET) and sent to the agent
//	               (CHECKPOINT_RESOURCES); GET_AGENTS shows them
//	resvops.go     the operator's RESERVE_RESOURCES .. SHRINK_VOLUME: ACLs,
//	               principals, conversion of the agent's resources
//	resvoffers.go  reserved resources in offers, exactly as reserved, and
//	               their return to their reservation pools
//	resvaccept.go  RESERVE .. SHRINK_VOLUME in ACCEPT, planned with its
//	               launches; tasks' reserved resources checked exactly
//	opfeedback.go  UPDATE_OPERATION_STATUS, ACKNOWLEDGE_OPERATION_STATUS,
//	               RECONCILE_OPERATIONS, GET_OPERATIONS
//	quota.go, quota_calls.go, quota_http.go, quota_alloc.go
//	               quota per role: UPDATE_QUOTA, SET_QUOTA, REMOVE_QUOTA,
//	               GET_QUOTA and /quota, validated as Mesos validates them,
//	               replicated (QUOTA_UPDATE) before the allocator is given
//	               it, restored on election
//	roles.go       GET_ROLES and GET /roles from the allocator's role tree
//	multirole.go   MULTI_ROLE frameworks: roles at SUBSCRIBE and
//	               UPDATE_FRAMEWORK, SUPPRESS/REVIVE per role
//
// Offers are leader-local and never replicated; after a restart the master
// rebuilds its allocator from the registry, agents re-register with the
// tasks they run, and frameworks re-subscribe within their failover timeout.
package master
