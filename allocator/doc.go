// Package allocator is allot's offer machine: agents, frameworks, declared
// demands, refuse filters, suppress and revive, and the allocation cycle
// that turns them into offers through a sorter criterion.
//
// One state machine, two homes: the master feeds it events from the network
// and the simulator feeds it events from a trace, and nothing in it knows
// which. It is deterministic: time comes from an injected Clock and
// randomness from a source seeded by Config.Seed, so the same events give
// the same offers. It is not safe for concurrent use; its owner serialises
// calls (the master runs it on one goroutine).
//
// Semantics follow Mesos's hierarchical allocator where the issue is silent:
//   - offered resources count as allocated to the framework until they are
//     recovered (declined, unused after accept, or freed by finished tasks);
//   - a decline may install a filter for (framework, agent, resources) that
//     lives max(allocation interval, refuse_seconds) and blocks a new offer
//     only if the refused resources contain it;
//   - suppress stops offers to a framework until revive, which also clears
//     its filters;
//   - in oblivious mode a selected framework is offered all unallocated
//     resources of the agent, provided they reach the min-allocatable floor;
//   - in characterized mode frameworks declare a per-task demand and the
//     cycle hands out one task's worth at a time (progressive filling);
//     frameworks that declared nothing are then served as in oblivious mode
//     from what is left.
//
// Ties are always broken the same way: lower score, then lower agent index
// (registration order), then lower framework index.
package allocator
