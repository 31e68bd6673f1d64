// Package placement is the framework library's side of Prophet's executor
// placement: when a driver holds offers on more agents
// than it needs executors, it picks the agents whose predicted availability
// of disk_bw and net_bw best matches its executors' profile, by the same
// score the master's prophet sorter uses (profile.Timeline.Score: the
// weighted fragmentation and over-allocation areas, eta 0.3, Euclidean norm
// across disk and network). The scoring math is not repeated here: this
// package only chooses, and it is pure (no I/O, time passed in), so the
// choice is testable by tables. The framework package fetches the agents'
// timelines from the master's GET /timelines and calls Choose.
package placement
