package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"
)

// MinVersion is the oldest protocol any allot endpoint accepts.
const MinVersion = tls.VersionTLS12

// EnvCA names the environment variable clients read the CA path from when
// no --tls-ca is given (the operator CLI and the framework library).
const EnvCA = "ALLOT_TLS_CA"

// Files names the PEM files of one process's TLS identity, as given by
// --tls-cert, --tls-key and --tls-ca. The zero value means TLS is off.
type Files struct {
	Cert string // the certificate chain this process presents
	Key  string // its private key
	CA   string // the CA bundle peers' certificates are verified against
}

// Enabled reports whether any file is named: a process then serves TLS
// (Load insists the set is complete).
func (f Files) Enabled() bool { return f.Cert != "" || f.Key != "" || f.CA != "" }

// Bundle is a loaded identity: the certificate and the CA pool. Build
// server and client configurations from it.
type Bundle struct {
	cert  tls.Certificate
	roots *x509.CertPool // nil: no --tls-ca; clients use the system pool
	files Files
}

// Load reads f. It returns (nil, nil) when TLS is off, and an error naming
// the flag and file at fault otherwise: a certificate without a key (or the
// reverse), a CA without a certificate, a file that is missing or holds no
// PEM certificate, a key that does not match, a certificate already expired.
func Load(f Files) (*Bundle, error) {
	if !f.Enabled() {
		return nil, nil
	}
	switch {
	case f.Cert == "" && f.Key == "":
		return nil, errors.New("--tls-ca needs --tls-cert and --tls-key: a server cannot speak TLS without a certificate of its own")
	case f.Cert == "":
		return nil, errors.New("--tls-key needs --tls-cert")
	case f.Key == "":
		return nil, errors.New("--tls-cert needs --tls-key")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s / --tls-key %s: %w", f.Cert, f.Key, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s: %w", f.Cert, err)
	}
	if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		return nil, fmt.Errorf("--tls-cert %s is valid only from %s to %s", f.Cert,
			leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	cert.Leaf = leaf
	b := &Bundle{cert: cert, files: f}
	if f.CA != "" {
		if b.roots, err = LoadCA(f.CA); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// LoadCA reads a PEM bundle of CA certificates.
func LoadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--tls-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", path)
	}
	return pool, nil
}

// HasCA reports whether a CA was given: peers' certificates are then
// verified against it, and raft between masters can be mutual.
func (b *Bundle) HasCA() bool { return b != nil && b.roots != nil }

// Files returns the paths b was loaded from.
func (b *Bundle) Files() Files { return b.files }

// Server is the configuration of an HTTP listener. Clients need not
// present a certificate (schedulers, curl and the CLI do not); one that
// does (an agent calling the master, a master calling an agent) is
// verified against the CA, so a certificate the CA did not sign fails the
// handshake instead of being ignored.
func (b *Bundle) Server() *tls.Config {
	c := &tls.Config{MinVersion: MinVersion, Certificates: []tls.Certificate{b.cert}}
	if b.roots != nil {
		c.ClientCAs = b.roots
		c.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return c
}

// MutualServer is the configuration of a listener every client of which
// must present a certificate signed by the CA (raft between masters).
func (b *Bundle) MutualServer() *tls.Config {
	c := b.Server()
	c.ClientCAs = b.roots
	c.ClientAuth = tls.RequireAndVerifyClientCert
	return c
}

// Client is the configuration of a process's calls to its peers: it
// verifies the server against the CA (the system pool without one) and
// presents this process's own certificate, so that a server asking for one
// (raft) gets it.
func (b *Bundle) Client() *tls.Config {
	return &tls.Config{MinVersion: MinVersion, RootCAs: b.roots, Certificates: []tls.Certificate{b.cert}}
}

// ClientFor is the client configuration of a process that has no identity
// of its own (the CLI, a framework): it verifies servers against the CA in
// caPath, or, when caPath is empty, against $ALLOT_TLS_CA. It returns nil
// (plain HTTP) when neither names a file.
func ClientFor(caPath string) (*tls.Config, error) {
	if caPath == "" {
		caPath = os.Getenv(EnvCA)
	}
	if caPath == "" {
		return nil, nil
	}
	pool, err := LoadCA(caPath)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: MinVersion, RootCAs: pool}, nil
}
