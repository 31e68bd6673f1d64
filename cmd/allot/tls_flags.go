package main

import (
	"crypto/tls"
	"flag"
	"net/http"
	"time"

	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/tlsconf"
)

// tlsFlags are --tls-cert, --tls-key and --tls-ca of `allot master` and
// `allot agent` (docs/security-tls.md).
type tlsFlags struct{ cert, key, ca string }

func addTLSFlags(fs *flag.FlagSet, f *tlsFlags, what string) {
	fs.StringVar(&f.cert, "tls-cert", "", "PEM `file` of this "+what+"'s certificate: every HTTP listener then speaks TLS (1.2 or later)")
	fs.StringVar(&f.key, "tls-key", "", "PEM `file` of the private key of --tls-cert")
	fs.StringVar(&f.ca, "tls-ca", "", "PEM `file` of the CA that signs the cluster's certificates: peers are verified against it\n(masters' raft is mutual TLS and needs it; without it the system's CAs verify masters)")
}

func (f tlsFlags) files() tlsconf.Files { return tlsconf.Files{Cert: f.cert, Key: f.key, CA: f.ca} }

// addClientTLSFlag is --tls-ca of a client verb (the CLI, `allot run`).
func addClientTLSFlag(fs *flag.FlagSet, ca *string) {
	fs.StringVar(ca, "tls-ca", "", "PEM `file` of the CA that signed the masters' certificates: talk to them over https and verify\nthem (default $"+tlsconf.EnvCA+"; a --master given as https://host:port uses the system's CAs)")
}

// clientTLS loads a client's CA (--tls-ca, else $ALLOT_TLS_CA); nil means
// plain HTTP.
func clientTLS(ca string) (*tls.Config, error) { return tlsconf.ClientFor(ca) }

// newHTTPClient is the CLI's HTTP client. A CA that cannot be loaded makes
// every request fail with the reason, so that verbs report it where they
// report an unreachable master.
func newHTTPClient(timeout time.Duration, ca string) *http.Client {
	cfg, err := clientTLS(ca)
	if err != nil {
		return &http.Client{Timeout: timeout, Transport: failingTransport{err}}
	}
	if cfg == nil {
		return &http.Client{Timeout: timeout}
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = cfg
	return &http.Client{Timeout: timeout, Transport: t}
}

// usesTLS reports whether cli verifies servers with a CA of ours, so that
// URLs to masters get https.
func usesTLS(cli *http.Client) bool {
	tr := cli.Transport
	if b, ok := tr.(*auth.BasicTransport); ok {
		tr = b.Base
	}
	t, ok := tr.(*http.Transport)
	return ok && t.TLSClientConfig != nil
}

// masterURL is the URL of path on the master at addr for cli.
func masterURL(cli *http.Client, addr, path string) string {
	return tlsconf.URL(usesTLS(cli), withDefaultPort(addr), path)
}

type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }
