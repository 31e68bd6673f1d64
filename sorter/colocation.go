package sorter

// CoLocating is the shape of a criterion that chooses, on each agent, the
// next job to start there from a window of the queue, with weights that
// depend on the agent's residents (the co-location bandit). It is a shape
// of its own because neither Sampler (weights independent of the agent)
// nor PerAgent (a score per framework) fits: the bandit's softmax runs
// over the distinct job types of the window, conditioned on the types
// already running on the agent, and its preferences are learned state the
// allocator owns as a model. The math it uses is Preferences (bandit.go),
// pure and here; the window, the draw from the allocator's seeded source
// and the rule that jobs already placed are served first live in the
// allocator's fill path for this shape (allocator/prog_bandit.go).
type CoLocating interface {
	Criterion
	// CoLocates marks the shape.
	CoLocates()
}

// Bandit is the co-location bandit of Thamsen et al. (--sorter bandit).
// Its parameters (step size, window, baseline scope, wait weight) are the
// allocator's configuration, since the criterion value is shared.
type Bandit struct{}

func (Bandit) Name() string { return "bandit" }

// CoLocates marks Bandit as CoLocating.
func (Bandit) CoLocates() {}

var _ CoLocating = Bandit{}
