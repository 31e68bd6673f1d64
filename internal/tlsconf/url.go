package tlsconf

import "strings"

// Scheme is "https" when secure, else "http".
func Scheme(secure bool) string {
	if secure {
		return "https"
	}
	return "http"
}

// URL is the one place allot builds the URL of a master's or agent's HTTP
// API from a host:port flag: the scheme follows whether TLS is configured,
// unless addr names one itself ("https://master:5050", for a master whose
// certificate a public CA signed and so needs no --tls-ca).
func URL(secure bool, addr, path string) string {
	switch {
	case strings.HasPrefix(addr, "https://"), strings.HasPrefix(addr, "http://"):
		return strings.TrimSuffix(addr, "/") + path
	}
	return Scheme(secure) + "://" + addr + path
}

// HostPort strips a scheme (and any path) from addr, leaving host:port.
func HostPort(addr string) string {
	addr = strings.TrimPrefix(strings.TrimPrefix(addr, "https://"), "http://")
	if i := strings.IndexByte(addr, '/'); i >= 0 {
		addr = addr[:i]
	}
	return addr
}
