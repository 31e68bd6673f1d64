package limits

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serve runs h behind BodyDeadline and a ConnLimiter on loopback, as the
// master and the agent do, and returns its address.
func serve(t *testing.T, s Server, h http.Handler, budget *BodyBudget, hooks ConnHooks) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithDefaults()
	srv := &http.Server{Handler: BodyDeadline(h, s.BodyTimeout, budget, func(*http.Request) int64 { return 1 << 20 }, nil)}
	s.Apply(srv)
	go srv.Serve(LimitConns(ln, s.MaxConns, s.MaxConnsPerHost, hooks))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// dial opens a raw connection with a generous deadline: the test waits on
// the server's answer, never on a fixed time.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

func TestBodyDeadlineCutsAStalledBody(t *testing.T) {
	got := make(chan error, 1)
	addr := serve(t, Server{BodyTimeout: 100 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
		if IsTimeout(err) {
			http.Error(w, TimeoutMessage(100*time.Millisecond), http.StatusRequestTimeout)
		}
	}), nil, ConnHooks{})
	c := dial(t, addr)
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789") // 10 of 100, then nothing
	select {
	case err := <-got:
		if !IsTimeout(err) {
			t.Fatalf("read of a stalled body: %v, want a timeout", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a stalled body was never cut")
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408", resp.StatusCode)
	}
}

func TestBodyDeadlineSparesAStreamedResponse(t *testing.T) {
	const timeout = 50 * time.Millisecond
	var cancelled atomic.Bool
	addr := serve(t, Server{BodyTimeout: timeout}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			t.Errorf("reading the body: %v", err)
			return
		}
		// Stream for several body timeouts: the connection's read deadline
		// must not cancel the request once the body is read.
		start := time.Now()
		tick := time.NewTicker(timeout / 5)
		defer tick.Stop()
		for time.Since(start) < 6*timeout {
			select {
			case <-r.Context().Done():
				cancelled.Store(true)
				return
			case <-tick.C:
				io.WriteString(w, "event\n")
				http.NewResponseController(w).Flush()
			}
		}
		io.WriteString(w, "end\n")
	}), nil, ConnHooks{})
	resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader("subscribe"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if cancelled.Load() || !strings.HasSuffix(string(b), "end\n") {
		t.Fatalf("stream cut (context cancelled %v); got %q", cancelled.Load(), b)
	}
}

func TestIdleTimeoutClosesTheConnection(t *testing.T) {
	addr := serve(t, Server{IdleTimeout: 50 * time.Millisecond}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), nil, ConnHooks{})
	c := dial(t, addr)
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	// The connection now idles: the server closes it (EOF), well before
	// the 30 s the client would wait.
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read %v, want EOF (closed by the server)", err)
	}
}

func TestConnLimiterRefusesOverThePerHostCap(t *testing.T) {
	refused := make(chan Refusal, 10)
	var open atomic.Int64
	addr := serve(t, Server{MaxConnsPerHost: 2}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), nil, ConnHooks{Open: func(n int) { open.Store(int64(n)) }, Refused: func(why Refusal) { refused <- why }})
	var held []*bufio.Reader
	for range 2 {
		c := dial(t, addr)
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		br := bufio.NewReader(c)
		if _, err := http.ReadResponse(br, nil); err != nil {
			t.Fatalf("connection within the cap: %v", err)
		}
		held = append(held, br)
	}
	third := dial(t, addr)
	fmt.Fprintf(third, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if _, err := http.ReadResponse(bufio.NewReader(third), nil); err == nil {
		t.Fatal("the third connection from one host was served; want it closed")
	}
	if why := <-refused; why != RefusedAddress {
		t.Fatalf("refused for %q, want %q", why, RefusedAddress)
	}
	if n := open.Load(); n != 2 {
		t.Fatalf("open connections %d, want 2", n)
	}
}

func TestConnLimiterPerHostExempt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitConns(ln, 0, 1, ConnHooks{PerHostExempt: func(host string) bool { return host == "127.0.0.1" }})
	defer l.Close()
	for range 3 {
		dial(t, ln.Addr().String())
		c, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	if n := l.Open(); n != 3 {
		t.Fatalf("open %d, want 3: an exempt host passes the per-host cap", n)
	}
}

func TestConnLimiterListenerCapAndRelease(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan Refusal, 10)
	l := LimitConns(ln, 1, 0, ConnHooks{Refused: func(why Refusal) { refused <- why }})
	defer l.Close()
	accepted := make(chan net.Conn, 2)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	a := dial(t, ln.Addr().String())
	first := <-accepted
	dial(t, ln.Addr().String())
	if why := <-refused; why != RefusedListener {
		t.Fatalf("refused for %q, want %q", why, RefusedListener)
	}
	first.Close()
	first.Close() // twice: the slot is given back once
	a.Close()
	if n := l.Open(); n != 0 {
		t.Fatalf("open %d after close, want 0", n)
	}
	dial(t, ln.Addr().String())
	select {
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("a connection after a close was not accepted")
	}
}

func TestBodyBudget(t *testing.T) {
	budget := NewBodyBudget(150)
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	addr := serve(t, Server{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release // hold the reservation
		io.ReadAll(r.Body)
	}), budget, ConnHooks{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/", strings.NewReader(strings.Repeat("a", 100)))
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	if n := budget.InFlight(); n != 100 {
		t.Fatalf("in flight %d, want 100 reserved from Content-Length", n)
	}
	resp, err := http.Post("http://"+addr+"/", "text/plain", strings.NewReader(strings.Repeat("b", 100)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("over the budget: %d, want 503 with Retry-After", resp.StatusCode)
	}
	close(release)
	for deadline := time.Now().Add(30 * time.Second); budget.InFlight() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("in flight %d after the body ended, want 0", budget.InFlight())
		}
	}
}
