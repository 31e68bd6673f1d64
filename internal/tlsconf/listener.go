package tlsconf

import (
	"bufio"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"
)

// recordTypeHandshake is the first byte of every TLS connection (a
// ClientHello record); plain HTTP starts with a method name.
const recordTypeHandshake = 0x16

// sniffTimeout bounds how long a connection may stay silent before its
// first byte tells TLS from plaintext.
const sniffTimeout = 10 * time.Second

// NewSniffListener serves TLS with cfg on ln and, to connections allow
// accepts, plain HTTP on the same port: it reads each connection's first
// byte, off the accept loop, and hands Accept either a *tls.Conn (a TLS
// client, or a plaintext one allow refused, which http.Server then answers
// 400 "Client sent an HTTP request to an HTTPS server") or the connection
// as it is. The agent uses it so that executors on its own host, whatever
// client library they use, reach the executor API at the address they were
// given while every other client must speak TLS.
func NewSniffListener(ln net.Listener, cfg *tls.Config, allow func(net.Conn) bool) net.Listener {
	l := &sniffListener{Listener: ln, cfg: cfg, allow: allow, conns: make(chan net.Conn), errc: make(chan error), done: make(chan struct{})}
	go l.acceptLoop()
	return l
}

type sniffListener struct {
	net.Listener
	cfg   *tls.Config
	allow func(net.Conn) bool
	conns chan net.Conn
	errc  chan error
	done  chan struct{}
	once  sync.Once
}

func (l *sniffListener) acceptLoop() {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			select {
			case l.errc <- err:
			case <-l.done:
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond) // EMFILE and the like: http.Server backs off too
			continue
		}
		go l.classify(c)
	}
}

func (l *sniffListener) classify(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(sniffTimeout))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	c.SetReadDeadline(time.Time{})
	if err != nil {
		c.Close()
		return
	}
	var out net.Conn = &peekedConn{Conn: c, r: br}
	if first[0] == recordTypeHandshake || !l.allow(c) {
		out = tls.Server(out, l.cfg)
	}
	select {
	case l.conns <- out:
	case <-l.done:
		c.Close()
	}
}

func (l *sniffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case err := <-l.errc:
		return nil, err
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *sniffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// peekedConn reads first what classify peeked.
type peekedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *peekedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// LocalPeer reports whether c comes from this host: over loopback, or from
// the very address it reached (a process dialling this host's own address,
// as an executor given the agent's advertised address does).
func LocalPeer(c net.Conn) bool {
	r, ok1 := c.RemoteAddr().(*net.TCPAddr)
	l, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return false
	}
	return r.IP.IsLoopback() || r.IP.Equal(l.IP)
}
