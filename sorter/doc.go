// Package sorter holds allot's fairness and packing criteria: given the
// state of frameworks and agents, which framework is served next, and on
// which agent. Everything here is a pure function of its arguments: no I/O,
// no clocks, no goroutines, no hidden randomness (the random sorter reads a
// weight and lets the allocator draw from its seeded source). The allocator
// and the simulator therefore make identical decisions from identical inputs.
//
// Notation follows DESIGN.md and the papers in shared/papers: framework n
// with weight phi_n, per-task demand d_n, x_n tasks' worth allocated,
// allocation a_n; agent i with capacity c_i and residual (unallocated)
// capacity; C the cluster total. Every criterion returns a score where
// lower is served first; ties are broken by the allocator, always the same
// way (agent index, then framework registration order).
//
// Criteria come in three shapes, each a small interface:
//   - Ordering: an agent-independent key (DRF, TSF, FIFO, capacity);
//   - PerAgent: a score that depends on the agent (PS-DSF, rPS-DSF, Tetris);
//   - Sampler: a weighted random pick (Mesos's random sorter).
//
// The co-location bandit's math lives in bandit.go: Goodness (the paper's
// eq. 1 over a node's measured usage), Preferences (the matrix H(a | a')
// with its softmax Policy, gradient-bandit Update and Snapshot/Restore for
// replication) and Draw, which maps a uniform number from the allocator's
// seeded source to a choice. The allocator owns a Preferences as a model;
// its doc comment states the choices the paper leaves open.
//
// Criteria rank frameworks, never roles: with hierarchical roles, quota or
// reservations in use, the allocator sorts roles level by level by
// weighted dominant share (Mesos's role sorter) and asks the criterion
// only which framework within a role is served first (docs/roles.md).
// There too an Ordering's key, or a CapacityScored criterion's score on an
// agent's capacity, lets the allocator keep each role's members sorted
// rather than score them on every agent: a criterion that claims either
// shape must honour it exactly, or the two ways of picking disagree.
//
// PS-DSF and rPS-DSF are also Separable (score = framework factor x agent
// factor), which lets the allocator select framework and agent jointly in
// O(shapes x log agents) per task rather than scoring every pair.
package sorter
