// Package auth decides who is calling (authentication) and what they may do
// (authorization) on the master's and the agent's HTTP endpoints.
//
// The seam between the two halves is the request's context: the
// authenticating middleware stores the caller's principal with
// WithPrincipal, and everything after it (ACL checks, rate limits, audit
// logs) reads it with PrincipalFrom. A request that carried no credential
// (authentication off, or a read-only endpoint left open) has no principal;
// ACLs treat it as Mesos treats an unauthenticated caller (the ANY/NONE
// principal rules apply).
//
// The package imports only the standard library, so master, agent,
// framework and cmd/allot can all use it.
package auth
