package master

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/allot-sched/allot/api"
)

// A follower forwards what only the leader can serve (cluster.go's
// leaderOnly) to the leader through a reverse proxy, so a client given any
// master's address works: mesos-go's httpsched follows a 307 for SUBSCRIBE
// only and sends every later call to the address it was built with, and an
// agent or operator tool should not have to know which master leads.
// Config.Redirect keeps the older 307 answer instead.

// ForwardedHeader marks a request a master forwarded (its value: the
// forwarding master) and a response that came through one (the leader's
// address). A forwarded request is never forwarded again: two masters that
// briefly name each other leader must not bounce a call between them.
const ForwardedHeader = "X-Allot-Forwarded"

// maxReplayBody bounds the request body a follower buffers before
// forwarding; larger bodies (a registry snapshot restore) stream through
// unbuffered.
const maxReplayBody = 16 << 20

// forwardTransport carries forwarded calls. Not http.DefaultTransport:
// masters talk to each other directly (no HTTP_PROXY from the
// environment), a partitioned leader must fail a dial in seconds rather
// than half a minute, and a follower forwarding for thousands of agents
// wants more than two idle connections to the leader.
var forwardTransport = &http.Transport{
	DialContext:         (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
	MaxIdleConnsPerHost: 256,
	IdleConnTimeout:     90 * time.Second,
}

// forwarder holds the streams a follower proxies. Each leader it forwards
// to is a generation; when the leader it knows changes (another master is
// elected, this one is, or none is known) the generation ends and every
// stream forwarded in it ends cleanly, so schedulers, agents and operator
// subscribers re-subscribe and reach the new leader.
type forwarder struct {
	mu     sync.Mutex
	leader string        // the leader of the current generation
	done   chan struct{} // closed when that generation ends
	open   atomic.Int64  // forwarded streams still open (tests, metrics)
}

// generation returns the channel that closes when the current leader
// changes.
func (f *forwarder) generation() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done == nil {
		f.done = make(chan struct{})
	}
	return f.done
}

// observe records the leader now known ("" for none, this master's own
// address when it leads) and ends the generation if it changed.
func (f *forwarder) observe(leader string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if leader == f.leader {
		return false
	}
	f.leader = leader
	if f.done != nil {
		close(f.done)
	}
	f.done = make(chan struct{})
	return true
}

// watchForwarding follows who leads, every tick, ending forwarded streams
// when that changes. Polling raft's leader is cheap, and it sees every
// change (raft's notifications tell only this master's own leadership).
func (m *Master) watchForwarding() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			m.fwd.observe("stopped")
			return
		case <-t.C:
		}
		leader, self := m.rep.leader()
		if self || m.leader.Load() {
			leader = m.self.HTTP
		}
		if m.fwd.observe(leader) && m.fwd.open.Load() > 0 {
			m.log.Info().Str("leader", leader).Int64("streams", m.fwd.open.Load()).Msg("leader changed; ending forwarded streams")
		}
	}
}

// forward proxies r to leader and copies the answer back as it comes
// (FlushInterval -1: event streams must not be buffered). Headers go both
// ways untouched (Mesos-Stream-Id included). A leader that cannot be
// reached answers 503 with Retry-After, as when no leader is known.
func (m *Master) forward(w http.ResponseWriter, r *http.Request, leader string) {
	if r.Header.Get(ForwardedHeader) != "" {
		m.noLeader(w) // forwarded to us by a master that thinks we lead
		return
	}
	if err := replayableBody(r); err != nil {
		api.WriteError(w, api.Errorf(http.StatusBadRequest, "reading the request body: %v", err))
		return
	}
	gen := m.fwd.generation()
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&url.URL{Scheme: m.scheme(), Host: leader})
			pr.Out.Host = leader
			pr.Out.Header.Set(ForwardedHeader, m.self.HTTP)
		},
		Transport:     m.peerTransport,
		FlushInterval: -1,
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set(ForwardedHeader, leader)
			if resp.ContentLength < 0 { // a stream, or of unknown length
				resp.Body = m.cutOnLeaderChange(resp.Body, gen)
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			m.log.Debug().Err(err).Str("leader", leader).Str("path", r.URL.Path).Msg("forwarding to the leader failed")
			w.Header().Set("Retry-After", "1")
			api.WriteError(w, api.Errorf(http.StatusServiceUnavailable, "the leading master %s could not be reached (%v); retry shortly", leader, err))
		},
	}
	r = r.Clone(r.Context())
	r.RequestURI = ""
	proxy.ServeHTTP(w, r)
}

// replayableBody reads a bounded request body once into memory so the
// proxy can send it (and resend it, GetBody) without depending on the
// client's connection; bodies over maxReplayBody stream through.
func replayableBody(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength > maxReplayBody {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxReplayBody+1))
	if err != nil {
		return err
	}
	if len(data) > maxReplayBody { // unknown length and too big: stream the rest
		r.Body = bodyReadCloser{io.MultiReader(bytes.NewReader(data), r.Body), r.Body}
		return nil
	}
	r.Body.Close()
	r.ContentLength = int64(len(data))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	r.Body, _ = r.GetBody()
	return nil
}

type bodyReadCloser struct {
	io.Reader
	io.Closer
}

// cutBody is a forwarded stream's body from the leader. It ends with a
// clean io.EOF, not an error, when the leader changes or the connection to
// the leader breaks (the leader died): ReverseProxy then finishes the
// chunked answer properly instead of aborting the client's connection, and
// the client sees the stream end as when a leader closes it.
type cutBody struct {
	rc   io.ReadCloser
	cut  atomic.Bool
	once sync.Once
	stop chan struct{}
	m    *Master
}

func (m *Master) cutOnLeaderChange(rc io.ReadCloser, gen <-chan struct{}) io.ReadCloser {
	b := &cutBody{rc: rc, stop: make(chan struct{}), m: m}
	m.fwd.open.Add(1)
	go func() {
		select {
		case <-gen:
			b.cut.Store(true)
			rc.Close() // unblocks a Read waiting on the leader
		case <-b.stop:
		}
	}()
	return b
}

func (b *cutBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		if !b.cut.Load() {
			b.m.log.Debug().Err(err).Msg("forwarded stream from the leader broke; ending it")
		}
		err = io.EOF
	}
	return n, err
}

func (b *cutBody) Close() error {
	b.once.Do(func() { close(b.stop); b.m.fwd.open.Add(-1) })
	return b.rc.Close()
}
