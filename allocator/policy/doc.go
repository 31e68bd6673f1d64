// Package policy is the seam between the allocator and its stateful
// policies: the signals frameworks and agents report that only a policy
// reads (Signal and its kinds), the events the allocator forwards to a
// policy's model, and the options a policy parses.
//
// It is a leaf: the allocator and every policy package import it, and it
// imports neither, so a new policy adds a package under allocator/policy
// rather than methods on the allocator.
package policy
