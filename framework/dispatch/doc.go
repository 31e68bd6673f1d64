// Package dispatch decides where the driver runs each pending task: on
// which executor with a free core, or not yet.
//
// A Dispatcher sees one task and the executors' slots and answers with an
// executor or "wait". It is pure (the time comes in as an argument), so a
// policy can wrap another: Prophet's task backoff, for one, will keep tasks
// off an executor whose disk or network bandwidth has collapsed and defer to
// the wrapped dispatcher otherwise. LocalityWait is the driver's rule today.
package dispatch
