// Package bandit is the co-location gradient bandit's policy model
// (--sorter bandit): the preference matrix, each framework's job type and
// per agent the last decision drawn there, which the node's measured
// usage (or progress) then credits. The allocator's fill path that draws
// is allocator/prog_bandit.go; it reads this model through its exported
// methods and records each draw with Decide.
package bandit
