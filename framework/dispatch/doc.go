// Package dispatch decides where the driver runs each pending task: on
// which executor with a free core, or not yet.
//
// A Dispatcher sees one task and the executors' slots and answers with an
// executor or "wait". It is pure (the time comes in as an argument), so a
// policy can wrap another: Backoff (Prophet's task backoff) gives fewer
// tasks to the executors that overuse a host's collapsed disk or network
// and defers to the wrapped dispatcher otherwise; it is fed per round from
// the agents' usage rates and not yet wired into the driver. LocalityWait
// is the driver's rule today.
package dispatch
