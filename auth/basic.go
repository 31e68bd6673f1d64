package auth

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Realm is the HTTP authentication realm of every allot endpoint. One realm
// for all: a browser asked once for the UI keeps sending the credential to
// the master's other endpoints.
const Realm = "allot"

// Unauthorized answers 401 with a challenge for scheme ("Basic" or
// "Bearer") and a body saying what was wrong, so that a client's log (or
// curl) tells the operator which flag or credential is missing.
func Unauthorized(w http.ResponseWriter, scheme, format string, args ...any) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("%s realm=%q", scheme, Realm))
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, fmt.Sprintf(format, args...)+"\n")
}

// CheckBasic authenticates r's HTTP Basic credential against v. It returns
// the principal, or a message for the 401 saying what was wrong (never the
// secret, and not whether the principal exists).
func CheckBasic(r *http.Request, v Verifier) (principal, problem string) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", "no Authorization header: this endpoint requires HTTP Basic authentication with a principal and secret from the master's --credentials"
	}
	p, s, ok := r.BasicAuth()
	if !ok {
		scheme, _, _ := strings.Cut(h, " ")
		return "", fmt.Sprintf("the Authorization header is not valid HTTP Basic (scheme %q): want \"Basic base64(principal:secret)\"", scheme)
	}
	if !v.Verify(p, s) {
		return "", fmt.Sprintf("principal %q: unknown principal or wrong secret", p)
	}
	return p, ""
}

// BasicTransport is an http.RoundTripper that adds cred as HTTP Basic to
// every request: the CLI's, the agent's and the tests' way to present a
// credential. A zero Credential adds nothing.
type BasicTransport struct {
	Base http.RoundTripper // nil: http.DefaultTransport
	Cred Credential
}

var _ http.RoundTripper = (*BasicTransport)(nil)

// RoundTrip implements http.RoundTripper. It clones the request (a
// RoundTripper must not modify the one it is given).
func (t *BasicTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if t.Cred.Principal == "" || r.Header.Get("Authorization") != "" {
		return base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	r.SetBasicAuth(t.Cred.Principal, t.Cred.Secret)
	return base.RoundTrip(r)
}
