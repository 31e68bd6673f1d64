package main

import (
	"net"
	"strings"
)

// defaultMasterPort is the port a --master without one means: the
// master's default --listen port, as Mesos's 5050.
const defaultMasterPort = "5050"

// withDefaultPort adds :5050 to a master address that names only a host
// ("10.0.0.1", "m1", "https://m1", "[::1]" or "::1"), so that it is not
// dialled on the scheme's port 80 or 443. Anything else is returned as it
// came.
func withDefaultPort(addr string) string {
	scheme := ""
	for _, s := range []string{"https://", "http://"} {
		if strings.HasPrefix(addr, s) {
			scheme, addr = s, addr[len(s):]
		}
	}
	host, path := addr, ""
	if i := strings.IndexByte(addr, '/'); i >= 0 {
		host, path = addr[:i], addr[i:]
	}
	if host == "" {
		return scheme + addr
	}
	if _, _, err := net.SplitHostPort(host); err == nil {
		return scheme + addr
	}
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.Contains(h, "]") || strings.Contains(h, "[") {
		return scheme + addr // malformed; let the dialler say so
	}
	return scheme + net.JoinHostPort(h, defaultMasterPort) + path
}

// splitMasters splits a --master list and gives each address its default
// port.
func splitMasters(s string) []string {
	var out []string
	for _, m := range strings.Split(s, ",") {
		if m = strings.TrimSpace(m); m != "" {
			out = append(out, withDefaultPort(m))
		}
	}
	return out
}
