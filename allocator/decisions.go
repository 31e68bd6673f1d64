package allocator

import "github.com/allot-sched/allot/resources"

// Decisions is what one allocation cycle decides.
type Decisions struct {
	// Offers are resources offered to frameworks, in the order they were
	// decided.
	Offers []Offer
	// InverseOffers ask frameworks to give resources back: with
	// Config.Reclaim, reclaim.go derives them from the criterion's shares
	// when frameworks starve; nil otherwise.
	InverseOffers []InverseOffer
}

// InverseOffer asks a framework to give back resources it holds on an
// agent ("framework F, give back R on agent A"). The master sends it as a
// Mesos INVERSE_OFFER and the simulator hands it to its framework; the
// framework answers by releasing what it can. Until then the resources
// stay allocated to the framework: an inverse offer changes no books.
type InverseOffer struct {
	Framework string
	Agent     string
	Resources resources.Resources
	// Reason says in an operator's words why the resources are wanted
	// back, e.g. "f2 waits for cpus:4 at dominant share 0.05 while f1
	// holds 0.60".
	Reason string
}
