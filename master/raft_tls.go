package master

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"

	"github.com/allot-sched/allot/internal/tlsconf"
)

// tlsLayer is raft's stream layer over mutual TLS: every connection, in
// either direction, is between two holders of certificates the cluster's
// CA signed. It wraps tcpLayer, so binding one address and advertising
// another, and dialling from the bound IP, work as without TLS.
//
// The listener requires and verifies a client certificate: a process
// that can reach the raft port but holds no certificate from the CA
// cannot vote, append entries or install a snapshot. A dialler verifies
// the peer's server certificate against the CA for the host it dialled,
// so a peer's certificate must name its --raft-addr host.
type tlsLayer struct {
	tcp    *tcpLayer
	ln     net.Listener
	client *tls.Config
}

var _ raft.StreamLayer = (*tlsLayer)(nil)

// newTLSLayer wraps tcp in mutual TLS with b's identity and CA.
func newTLSLayer(tcp *tcpLayer, b *tlsconf.Bundle) (*tlsLayer, error) {
	if !b.HasCA() {
		return nil, fmt.Errorf("raft over TLS needs --tls-ca: masters verify each other's certificates against it")
	}
	return &tlsLayer{tcp: tcp, ln: tls.NewListener(tcp.Listener, b.MutualServer()), client: b.Client()}, nil
}

// Accept returns the next connection; its handshake runs on first use, in
// raft's handler for it, so one slow or hostile peer does not hold up the
// accept loop (raft closes the connection when the handshake fails).
func (l *tlsLayer) Accept() (net.Conn, error) { return l.ln.Accept() }

func (l *tlsLayer) Close() error { return l.ln.Close() }

func (l *tlsLayer) Addr() net.Addr { return l.tcp.Addr() }

// Dial connects to a peer and completes the handshake within timeout, so
// that a peer with the wrong certificate fails here, with a message that
// names it, rather than as a garbled RPC.
func (l *tlsLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	raw, err := l.tcp.Dial(addr, timeout)
	if err != nil {
		return nil, err
	}
	cfg := l.client.Clone()
	if host, _, err := net.SplitHostPort(string(addr)); err == nil {
		cfg.ServerName = host
	}
	c := tls.Client(raw, cfg)
	c.SetDeadline(time.Now().Add(timeout))
	if err := c.Handshake(); err != nil {
		raw.Close()
		return nil, tlsconf.Explain(fmt.Errorf("raft TLS handshake with %s: %w", addr, err), "raft peer "+string(addr))
	}
	c.SetDeadline(time.Time{})
	return c, nil
}
