// Package prophet is the gang criteria's policy model (--sorter prophet,
// tetris-peak): one profile.Timeline per agent holding the predicted
// profiles of the executors placed there, and the applications'
// declarations with their waits and deadlines. The allocator forwards it
// events (policy.Model); its gang fill path (allocator/gang.go) reads the
// timelines and applications through App, Agent and Agent.TL, and the
// master's /timelines view copies them out with Timelines.
package prophet
