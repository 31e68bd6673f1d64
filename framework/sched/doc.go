// Package sched is allot's well-behaved Mesos scheduler client: a thin layer
// over mesos-go's httpsched that does by default what the Mesos framework
// guide asks of a framework, and what starving clusters taught:
//
//   - subscribe with a failover timeout, and after a disconnection or a
//     master failover re-subscribe with the same framework id (with backoff,
//     trying each configured master in turn);
//   - reconcile every known task after every (re)subscription, retrying with
//     exponential backoff until each task has reported;
//   - acknowledge every status update that carries a UUID;
//   - never hold an offer: offers are answered in the event loop that
//     received them, and whatever the Planner does not use is declined at
//     once with a refuse filter;
//   - suppress offers while the Planner wants nothing and revive as soon as
//     it wants something again (Wake);
//   - declare the per-task demand vector with REQUEST after each
//     subscription, so the master's characterized mode can share agents.
//   - declare the head job's size to the size-based sorters (Config.JobSize
//     as FrameworkInfo labels; DeclareJobSize for the next job or a
//     prediction that arrived).
//
// The framework's own logic lives behind the Planner interface; the policy
// (what to call when) is in Client and is unit-tested against a fake
// calls.Caller.
package sched
