package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Authority is a throwaway certificate authority (ECDSA P-256) for
// `allot dev --tls` and tests: it issues certificates good for both ends of
// a connection, as each allot process is a server to some peers and a
// client of others. Production clusters bring their own CA.
type Authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
	// Validity is how long issued certificates (and the CA) are good for.
	Validity time.Duration
}

// NewAuthority makes a CA named cn, valid from an hour ago (clock skew)
// for validity.
func NewAuthority(cn string, validity time.Duration) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: cn, Organization: []string{"allot"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Authority{cert: cert, key: key, pem: pemBlock("CERTIFICATE", der), Validity: validity}, nil
}

// CertPEM is the CA's certificate, what --tls-ca files hold.
func (a *Authority) CertPEM() []byte { return a.pem }

// Issue signs a certificate for cn valid for hosts (IP addresses or DNS
// names) for server and client authentication, and returns it and its
// key in PEM.
func (a *Authority) Issue(cn string, hosts []string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"allot"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(a.Validity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", kder), nil
}

// WriteFiles writes the CA as ca.pem in dir (if not there yet) and a
// certificate for cn and hosts as NAME.pem and NAME-key.pem (key mode
// 0600), and returns the three paths as Files.
func (a *Authority) WriteFiles(dir, name, cn string, hosts []string) (Files, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, err
	}
	f := Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, name+".pem"), Key: filepath.Join(dir, name+"-key.pem")}
	certPEM, keyPEM, err := a.Issue(cn, hosts)
	if err != nil {
		return Files{}, err
	}
	for _, w := range []struct {
		path string
		b    []byte
		mode os.FileMode
	}{{f.CA, a.pem, 0o644}, {f.Cert, certPEM, 0o644}, {f.Key, keyPEM, 0o600}} {
		if err := os.WriteFile(w.path, w.b, w.mode); err != nil {
			return Files{}, fmt.Errorf("writing %s: %w", w.path, err)
		}
	}
	return f, nil
}

// LocalHosts are the names a certificate for a process on this machine
// needs: loopback by address and by name.
var LocalHosts = []string{"127.0.0.1", "::1", "localhost"}

// DevFiles makes a fresh CA and one certificate for LocalHosts in dir,
// what `allot dev --tls` and tests run every process with.
func DevFiles(dir string) (Files, error) {
	ca, err := NewAuthority("allot dev CA", 7*24*time.Hour)
	if err != nil {
		return Files{}, err
	}
	return ca.WriteFiles(dir, "node", "allot dev node", LocalHosts)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return n
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
