package limits

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Server is how long an HTTP server waits for a client and how many
// clients it serves at once: the --http-* flags of the master and the agent.
// A zero field is the default below; a negative one turns that bound off.
type Server struct {
	// ReadHeaderTimeout bounds reading a request's headers.
	ReadHeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body, from the end of its
	// headers. It is not http.Server.ReadTimeout: it ends when the body has
	// been read, so a response streamed after it (a SUBSCRIBE, the agent
	// protocol, an executor's stream) lives as long as it likes.
	BodyTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its
	// next request.
	IdleTimeout time.Duration
	// MaxConns and MaxConnsPerHost cap the connections open at once on the
	// listener, and from one remote host (ConnLimiter).
	MaxConns, MaxConnsPerHost int
	// MaxBodyBytesInFlight caps the bytes of request bodies being read at
	// once, over all connections: clients that announce large bodies and
	// stall cannot make the server hold more than this (BodyDeadline).
	MaxBodyBytesInFlight int64
}

// The defaults: generous for every legitimate client (an agent
// re-registering with all its tasks sends a few MiB in well under a
// second), small enough that idle or stalled clients are shed.
const (
	DefaultReadHeaderTimeout    = 10 * time.Second
	DefaultBodyTimeout          = 30 * time.Second
	DefaultIdleTimeout          = 2 * time.Minute
	DefaultMaxConns             = 10000
	DefaultMaxConnsPerHost      = 1000
	DefaultMaxBodyBytesInFlight = 64 << 20
)

// WithDefaults fills zero fields with the defaults and turns negative ones
// into 0 (off).
func (s Server) WithDefaults() Server {
	dur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		} else if *v < 0 {
			*v = 0
		}
	}
	dur(&s.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	dur(&s.BodyTimeout, DefaultBodyTimeout)
	dur(&s.IdleTimeout, DefaultIdleTimeout)
	num := func(v *int, d int) {
		if *v == 0 {
			*v = d
		} else if *v < 0 {
			*v = 0
		}
	}
	num(&s.MaxConns, DefaultMaxConns)
	num(&s.MaxConnsPerHost, DefaultMaxConnsPerHost)
	if s.MaxBodyBytesInFlight == 0 {
		s.MaxBodyBytesInFlight = DefaultMaxBodyBytesInFlight
	} else if s.MaxBodyBytesInFlight < 0 {
		s.MaxBodyBytesInFlight = 0
	}
	return s
}

// Apply sets the server's header and idle timeouts (after WithDefaults).
// The body timeout is BodyDeadline's, the connection caps ConnLimiter's.
func (s Server) Apply(srv *http.Server) {
	srv.ReadHeaderTimeout = s.ReadHeaderTimeout
	srv.IdleTimeout = s.IdleTimeout
}

// ErrBodyBudget is a read of a body refused because the bodies being read
// at once already hold Server.MaxBodyBytesInFlight.
var ErrBodyBudget = errors.New("too many request bytes are being read at once (--http-max-body-bytes-in-flight); retry shortly")

// BodyBudget counts the request body bytes being read at once.
type BodyBudget struct {
	max  int64 // <= 0: no cap
	used atomic.Int64
}

// NewBodyBudget caps the bytes in flight at max (<= 0: no cap).
func NewBodyBudget(max int64) *BodyBudget { return &BodyBudget{max: max} }

func (b *BodyBudget) take(n int64) bool {
	if b == nil || b.max <= 0 || n <= 0 {
		return true
	}
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return false
	}
	return true
}

func (b *BodyBudget) give(n int64) {
	if b != nil && b.max > 0 && n > 0 {
		b.used.Add(-n)
	}
}

// InFlight is the body bytes reserved now.
func (b *BodyBudget) InFlight() int64 { return b.used.Load() }

// BodyDeadline bounds how a request body is read:
//
//   - in time: the connection's read deadline is set to timeout from now
//     before h runs, and cleared as soon as the body has been read to its
//     end, so a stalled body is cut while a response streamed after the
//     body is not (net/http clears it too when it starts watching the
//     connection for a client that goes away; this does not rely on it).
//     A handler that reads a large body on purpose extends the deadline
//     itself (http.ResponseController).
//   - in memory: a body announcing its length reserves that many bytes of
//     budget (at most cap(r), the route's own cap) before h runs, and is
//     answered 503 with Retry-After when the budget is spent; a chunked
//     body reserves as it is read, and its read fails with ErrBodyBudget.
//     The reservation is given back when the body ends or h returns.
//
// cap(r) <= 0 exempts a route from the budget (one that streams its body
// to disk rather than holding it); the deadline applies to every route.
// refused is called for each 503 (may be nil).
func BodyDeadline(h http.Handler, timeout time.Duration, budget *BodyBudget, cap func(*http.Request) int64, refused func(*http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		b := &deadlineBody{ReadCloser: r.Body, rc: rc, budget: budget}
		if c := cap(r); c > 0 {
			b.limit = c
			if r.ContentLength > 0 {
				if !budget.take(min(r.ContentLength, c)) {
					if refused != nil {
						refused(r)
					}
					w.Header().Set("Connection", "close") // do not read the body
					w.Header().Set("Retry-After", "1")
					http.Error(w, ErrBodyBudget.Error(), http.StatusServiceUnavailable)
					return
				}
				b.reserved = min(r.ContentLength, c)
				b.prepaid = true
			}
		} else {
			b.budget = nil
		}
		if timeout > 0 {
			rc.SetReadDeadline(time.Now().Add(timeout)) // an error: not a net.Conn; nothing to bound
			b.timed = true
		}
		r.Body = b
		defer b.finish(false)
		h.ServeHTTP(w, r)
	})
}

// deadlineBody is a body under BodyDeadline.
type deadlineBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	budget   *BodyBudget
	limit    int64 // the route's cap: a chunked body reserves no more
	reserved int64
	prepaid  bool // reserved up front from Content-Length
	timed    bool

	mu   sync.Mutex
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.prepaid && n > 0 && b.budget != nil {
		add := min(int64(n), max(b.limit-b.reserved, 0))
		if !b.budget.take(add) {
			b.finish(false)
			return 0, ErrBodyBudget
		}
		b.reserved += add
	}
	if err != nil {
		b.finish(err == io.EOF)
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	err := b.ReadCloser.Close()
	b.finish(false)
	return err
}

// finish gives the reservation back, once, and on a body read to its end
// clears the deadline: what follows is the response, which may stream.
// Otherwise (an error, or the handler returned without reading it all)
// the deadline stays, so that net/http draining the rest of the body
// after the handler cannot be stalled either.
func (b *deadlineBody) finish(clear bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	b.done = true
	b.budget.give(b.reserved)
	if clear && b.timed {
		b.rc.SetReadDeadline(time.Time{})
	}
}

// IsTimeout reports whether err is a read that hit its deadline: a
// handler answers it 408 rather than 400.
func IsTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// TimeoutMessage is the 408 body for a body not read within d.
func TimeoutMessage(d time.Duration) string {
	return fmt.Sprintf("request body not received within %v (--http-body-timeout)", d)
}
