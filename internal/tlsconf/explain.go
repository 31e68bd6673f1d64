package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// PlaintextRefusal is what Go's http.Server answers (status 400) a client
// that sends plain HTTP to a TLS port, before closing the connection.
const PlaintextRefusal = "Client sent an HTTP request to an HTTPS server"

// ErrSpeaksTLS marks an error Explain made from a plaintext client
// reaching a TLS server.
var ErrSpeaksTLS = errors.New("server speaks TLS")

// ErrTLS marks every error Explain explained: the server is there, but the
// two sides do not agree on TLS (a caller need not suggest that it is
// down).
var ErrTLS = errors.New("TLS mismatch")

// explained is an error Explain rewrote; it unwraps to the original.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string        { return e.msg }
func (e *explained) Unwrap() error        { return e.err }
func (e *explained) Is(target error) bool { return target == ErrTLS }

func explain(err error, format string, args ...any) error {
	return &explained{msg: fmt.Sprintf(format, args...) + ": " + err.Error(), err: err}
}

// IsPlaintextRefusal reports whether an HTTP answer is a TLS server's
// refusal of a plaintext request.
func IsPlaintextRefusal(status int, body []byte) bool {
	return status == 400 && strings.Contains(string(body), PlaintextRefusal)
}

// Refused is the error for a plaintext request a TLS server refused; it
// matches ErrSpeaksTLS.
func Refused(addr string) error { return refusedError{addr} }

type refusedError struct{ addr string }

func (e refusedError) Error() string {
	return fmt.Sprintf("%s speaks TLS: pass --tls-ca FILE (or set %s) with the CA that signed its certificate", e.addr, EnvCA)
}

func (e refusedError) Is(target error) bool { return target == ErrSpeaksTLS || target == ErrTLS }

// Explain turns the error of a call to addr into one that says what to do
// when TLS is its cause, and returns other errors unchanged. The original
// error stays wrapped.
func Explain(err error, addr string) error {
	if err == nil {
		return nil
	}
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &ua):
		return explain(err, "%s presented a certificate no CA this client trusts signed: pass --tls-ca FILE (or set %s) with the CA that signed it", addr, EnvCA)
	case errors.As(err, &he):
		return explain(err, "%s's certificate does not name the host it was reached by: use an address among its names (%s)", addr, certNames(he.Certificate))
	case errors.As(err, &ci):
		return explain(err, "%s's certificate is not valid now or not for this use", addr)
	case errors.As(err, &rh), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return explain(err, "%s does not speak TLS (it answered in plaintext): drop --tls-ca / %s for it, or start it with --tls-cert and --tls-key", addr, EnvCA)
	case strings.Contains(err.Error(), PlaintextRefusal):
		return &explained{msg: fmt.Sprintf("%v (%v)", Refused(addr), err), err: refusedError{addr}}
	case strings.Contains(err.Error(), "remote error: tls:"):
		return explain(err, "%s refused the TLS handshake (does it require a client certificate signed by its CA?)", addr)
	}
	return err
}

// certNames lists the DNS and IP names a certificate is valid for.
func certNames(c *x509.Certificate) string {
	if c == nil {
		return "none"
	}
	var names []string
	names = append(names, c.DNSNames...)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
