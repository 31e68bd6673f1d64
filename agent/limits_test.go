package agent

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	reqlimits "github.com/allot-sched/allot/internal/limits"
)

// The executor API answers a body over --max-request-bytes 413 before
// decoding it; one under the cap reaches the handler (which refuses it for
// other reasons).
func TestExecutorBodyCap(t *testing.T) {
	a := &Agent{cfg: Config{MaxRequestBytes: 100}, log: zerolog.Nop()}
	reached := 0
	h := a.limitBodies(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached++
		w.WriteHeader(http.StatusAccepted)
	}))
	for _, tt := range []struct {
		size, want int
	}{{50, 202}, {100, 202}, {101, 413}} {
		req := httptest.NewRequest(http.MethodPost, "/api/v1/executor", strings.NewReader(strings.Repeat("x", tt.size)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%d-byte body: %d %q, want %d", tt.size, rec.Code, rec.Body, tt.want)
		}
	}
	if reached != 2 {
		t.Errorf("handler reached %d times, want 2", reached)
	}
}

// The agent's listener has the --http-* bounds: a stalled executor body is
// answered 408, an idle keep-alive is closed, and a connection over the
// per-host cap is closed at accept.
func TestAgentListenerBounds(t *testing.T) {
	a := startedAgent(t, Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: t.TempDir(),
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop(),
		HTTP: reqlimits.Server{BodyTimeout: 100 * time.Millisecond, IdleTimeout: 100 * time.Millisecond, MaxConnsPerHost: 2}})
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", a.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	stalled, sr := dial()
	fmt.Fprintf(stalled, "POST /api/v1/executor HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	if resp, err := http.ReadResponse(sr, nil); err != nil || resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("stalled executor body: %v %v, want 408", resp, err)
	}
	idle, ir := dial()
	fmt.Fprintf(idle, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(ir, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if _, err := ir.ReadByte(); err != io.EOF {
		t.Fatalf("idle keep-alive: %v, want EOF", err)
	}
	// Both closed by the agent; wait until it has let go of them (two
	// connections are served at once), then hold those two and try a third.
	served := func() (net.Conn, bool) {
		c, r := dial()
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
		_, err := http.ReadResponse(r, nil)
		return c, err == nil
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		c1, ok1 := served()
		c2, ok2 := served()
		if ok1 && ok2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the agent never served two connections at once again")
		}
		c1.Close()
		c2.Close()
	}
	third, tr := dial()
	fmt.Fprintf(third, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, err := http.ReadResponse(tr, nil); err == nil {
		t.Fatalf("third connection from one host answered %d; want it closed", resp.StatusCode)
	}
}
