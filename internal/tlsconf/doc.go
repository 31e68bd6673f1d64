// Package tlsconf loads a process's TLS identity (certificate, key and the
// CA that signs its peers) from PEM files and builds the tls.Configs that
// allot's servers and clients use: HTTP listeners of masters and agents,
// raft between masters (mutual TLS), and the clients that reach them (the
// agent, the framework library, the operator CLI).
//
// It also owns the one place URLs to a master or agent are built (URL), so
// that turning TLS on changes the scheme everywhere at once, and Explain,
// which turns the errors a TLS mismatch produces (x509 verification, a
// plaintext client on a TLS port, a TLS client on a plaintext port) into
// messages that say what to do.
//
// It is a leaf: it imports only the standard library, so the framework
// library may use it without reaching into the master or agent.
package tlsconf
