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
// Authentication's parts live here so that master, agent, framework and
// cmd/allot share them: credentials files in Mesos's JSON and text forms
// (credentials.go), HTTP Basic checking, the 401 challenge and a client
// RoundTripper that presents a credential (basic.go), and the executor
// tokens an agent signs for its executors (token.go). The master's and the
// agent's middleware that use them are master/authn.go and agent/authn.go;
// docs/security.md says which flag protects what.
//
// The package imports only the standard library, so master, agent,
// framework and cmd/allot can all use it.
package auth
