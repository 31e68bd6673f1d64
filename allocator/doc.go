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
//
// # Fill paths
//
// How a cycle places resources is decided once, in New, by choosePath in
// paths.go, from the mode, the agent selection and the criterion's shape
// (the sorter interface it implements). Nothing else branches on them.
// choosePath sets two things:
//
//   - a ranking (paths.go): the criterion as the paths read it, the keys
//     the framework sets are sorted by and a framework's score on an
//     agent: byKey (Ordering), byFactors (Separable), byScore (other
//     PerAgent), byDraw (Sampler);
//   - a filler, the path Allocate runs. In oblivious mode it is one
//     whole-agent path; in characterized mode it is characterized{tasks,
//     wholeAgents}: a progressive path for the frameworks that declared a
//     demand, then a whole-agent path for those that did not.
//
// Each path is its own file:
//
//	coarse_rrr.go      whole agents, random agent order; the framework per
//	                   agent by the first in order (Ordering), per capacity
//	                   class (CapacityScored), a scan (PerAgent) or a draw
//	                   (Sampler)
//	coarse_bestfit.go  whole agents, framework first, best-fitting agent
//	coarse_joint.go    whole agents, best (framework, agent) pair
//	prog_rrr.go        one task's worth per agent visit, random rounds
//	prog_bestfit.go    one task's worth, framework first, best-fitting agent
//	prog_joint.go      best pair by per-shape agent heaps: jointOrdered
//	                   (Ordering) and jointSeparable (Separable)
//	prog_brute.go      best pair by scoring every pair: the joint path of
//	                   criteria that do not factor, and the oracle the heap
//	                   paths and class orders are tested against
//	                   (Config.bruteForce)
//	prog_bandit.go     the co-location bandit (CoLocating): jobs already
//	                   placed first, else a draw in the queue's window
//	                   conditioned on the agent's residents (policy/bandit)
//	fill.go            what the paths share: candidates, recording
//	                   placements as offers, agent orders, weighted draws
//	gang.go            applications, not tasks (sorter.Gang: prophet,
//	                   tetris-peak): a framework that declared an
//	                   application demand (the AppDemand signal) gets its E
//	                   executors on distinct agents in one cycle or none;
//	                   it runs before the mode's path, which then serves
//	                   the frameworks without one (by DRF) from what is left;
//	                   its parameters are gang_params.go, each shape's lazy
//	                   heap of agents gang_heap.go, the executor scores and
//	                   the cycle's scratch timelines gang_score.go
//	policy/prophet     the gang criteria's model: one profile.Timeline per
//	                   agent, applications' waits and deadlines, and the
//	                   StageProgress signal re-anchoring an executor's
//	                   profile on its observed stage
//
// A new placement shape is a new file beside these and a case in
// choosePath, not a branch inside an existing path.
//
// # Roles, quota and reservations
//
// roles.go keeps the role tree (Mesos's hierarchical roles: weights,
// quota, the frameworks subscribed to each role), multirole.go the
// frameworks subscribed to several roles and suppression per role,
// reserve.go each agent's reservation pools and, in role mode, who holds
// what for which role from which pool, recover.go giving resources back.
// With flat roles, no quota, no reservation and no multi-role framework,
// Allocate runs the fill path above, unchanged; once any of them is in
// use it runs rolefill.go instead: Mesos 1.11's quota stage (unmet
// guarantees first) then fair-share stage (headroom held back for unmet
// guarantees), roles sorted level by level by weighted dominant share and
// frameworks within a role by the criterion, offers clipped to limits and
// reservation pools offered whole inside their role's subtree; rolesort.go
// keeps the roles in that order through the cycle. Which framework of a
// role is served is roleorder.go: where the criterion's
// score does not depend on what is left on the agent, each role keeps its
// members sorted through the cycle and the first eligible one is served;
// otherwise, and with Config.bruteForce, every member is scored.
// rolefast.go holds what the cycle asks of resources on every visit and
// grant (the min-allocatable floor, emptiness, the books' sums, shares),
// asked in place rather than of copies.
// docs/roles.md states the semantics and where they leave Mesos.
//
// # Decisions and policy models
//
// Allocate returns Decisions: offers, and inverse offers (give-back
// requests), which reclaim.go decides when Config.Reclaim is set: a
// framework above its fair share is asked to give back room for one that
// starves. Pressure reports the starving frameworks either way.
// Stateful policies (FSP's virtual cluster, Prophet's timelines, the
// bandit's preferences) keep their state in models the allocator owns
// (policy.Model, the seam in allocator/policy; model.go): they observe
// every change, stamped with the allocator's clock, refresh the
// criteria's views once before each cycle, and snapshot and restore
// through SnapshotPolicies and RestorePolicies so the master can
// replicate them. policy.Model states who calls what, when.
//
// The signals only policies read (application demand, job size, job
// type, usage, co-location and stage progress) arrive through one entry
// point, Observe, as a policy.Signal. Each policy is a package under
// allocator/policy (prophet, fsp, bandit) whose model New builds for the
// sorter that needs it; callers reach a policy's own operations through
// Model(name) (prophet.Of, bandit.Of), and its options through
// policy.Options. A new policy adds a package there, not methods here.
//
// # Placement feedback
//
// placement.go says why a framework was offered nothing (WhyNothing):
// its task larger than every agent, no agent with it free, its role's
// quota limit, filters, suppression, by resource and agent count. It is
// computed when asked; the cycle only stamps who was offered something.
package allocator
