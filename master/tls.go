package master

import (
	"crypto/tls"
	"net"
	"net/http"

	"github.com/allot-sched/allot/internal/tlsconf"
)

// TLS: with Config.TLS set, every listener of the master speaks TLS (the
// HTTP API on Listen, raft between masters with mutual TLS), and the
// master's own calls (forwarding to the leader, proxying sandbox files from
// agents) use https and verify the other side against the CA. TLS is all or
// nothing across a cluster: the master assumes its peers and agents speak
// it when it does.

// loadTLS loads cfg.TLS into m (New calls it, so that a bad file fails the
// start rather than the first connection).
func (m *Master) loadTLS() error {
	b, err := tlsconf.Load(m.cfg.TLS)
	if err != nil {
		return err
	}
	m.tls = b
	m.peerTransport = forwardTransport
	if b != nil {
		t := forwardTransport.Clone()
		t.TLSClientConfig = b.Client()
		m.peerTransport = t
	}
	return nil
}

// scheme is the scheme of URLs to this cluster's masters and agents.
func (m *Master) scheme() string { return tlsconf.Scheme(m.tls != nil) }

// listen wraps the HTTP listener in TLS when it is configured.
func (m *Master) listen(ln net.Listener) net.Listener {
	if m.tls == nil {
		return ln
	}
	return tls.NewListener(ln, m.tls.Server())
}

// agentTransport carries calls to an agent's HTTP API (sandbox files).
func (m *Master) agentTransport(base *http.Transport) *http.Transport {
	if m.tls != nil {
		base.TLSClientConfig = m.tls.Client()
	}
	return base
}
