package limits

import (
	"net"
	"sync"
)

// Refusal says why ConnLimiter closed a connection at accept.
type Refusal string

const (
	RefusedListener Refusal = "listener" // the listener held its cap
	RefusedAddress  Refusal = "address"  // the client's host held its cap
)

// ConnHooks report what a ConnLimiter does, for metrics, and which hosts
// the per-host cap spares. Any may be nil.
type ConnHooks struct {
	Open    func(n int)       // connections now open, after each change
	Refused func(why Refusal) // one connection closed at accept
	// PerHostExempt says whether a host at its cap may open more: a master
	// spares the other masters, which forward every client connected to
	// them over connections of their own. Asked only at the cap.
	PerHostExempt func(host string) bool
}

// ConnLimiter is a net.Listener that keeps at most max connections open,
// and at most perHost from one remote host (the IP, without the port:
// one client opening many connections is still one client). A connection
// over either cap is closed as soon as it is accepted, before a byte of it
// is read, so it costs the server no goroutine and no buffer; the client
// sees a reset or EOF and retries. Each connection counts until it is
// closed, however it is closed (served, hijacked, timed out).
type ConnLimiter struct {
	net.Listener
	max, perHost int // <= 0: no cap
	hooks        ConnHooks

	mu     sync.Mutex
	open   int
	byHost map[string]int
}

// LimitConns wraps ln; max and perHost <= 0 leave that cap off.
func LimitConns(ln net.Listener, max, perHost int, hooks ConnHooks) *ConnLimiter {
	return &ConnLimiter{Listener: ln, max: max, perHost: perHost, hooks: hooks, byHost: map[string]int{}}
}

// Accept returns the next connection within the caps, closing those over.
func (l *ConnLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := remoteHost(c)
		if why, ok := l.admit(host); !ok {
			c.Close()
			if l.hooks.Refused != nil {
				l.hooks.Refused(why)
			}
			continue
		}
		return &limitedConn{Conn: c, release: func() { l.release(host) }}, nil
	}
}

// Open is the number of connections open now.
func (l *ConnLimiter) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

func (l *ConnLimiter) admit(host string) (Refusal, bool) {
	l.mu.Lock()
	if l.max > 0 && l.open >= l.max {
		l.mu.Unlock()
		return RefusedListener, false
	}
	if l.perHost > 0 && l.byHost[host] >= l.perHost && (l.hooks.PerHostExempt == nil || !l.hooks.PerHostExempt(host)) {
		l.mu.Unlock()
		return RefusedAddress, false
	}
	l.open++
	l.byHost[host]++
	n := l.open
	l.mu.Unlock()
	if l.hooks.Open != nil {
		l.hooks.Open(n)
	}
	return "", true
}

func (l *ConnLimiter) release(host string) {
	l.mu.Lock()
	l.open--
	if l.byHost[host]--; l.byHost[host] <= 0 {
		delete(l.byHost, host) // hosts come from clients: do not keep them
	}
	n := l.open
	l.mu.Unlock()
	if l.hooks.Open != nil {
		l.hooks.Open(n)
	}
}

func remoteHost(c net.Conn) string {
	a := c.RemoteAddr()
	if a == nil {
		return ""
	}
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// limitedConn gives its slot back once, on the first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
