// Package registry is the master's replicated state: agents, frameworks,
// tasks with their latest status, the config and the policy record, each
// framework's completed tasks, the removed (gone) agent ids and the
// unreachable agents. It is the raft FSM
// (raft.FSM): every change arrives as an api.Command through the log, so
// each master that applies the same log holds the same registry, and its
// snapshot is a stream of RecordIO-framed api.SnapshotRecords written in a
// fixed order, so equal registries write equal snapshots.
//
// The registry knows nothing of connections, offers or the allocator: those
// are the leader's live state, in package master, which proposes commands
// and rebuilds its live state from the registry on election.
//
//	registry.go  Registry, applying commands, snapshot and restore
//	history.go   completed tasks and removed agents, bounded as Mesos bounds them
//	reservations.go  each agent's checkpointed resources (dynamic
//	             reservations, persistent volumes): AGENT_RESOURCES_SET
//	unreachable.go  agents marked unreachable, pruned by age and count
package registry
