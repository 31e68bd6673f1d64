package master

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// A forwarded stream carries the request body and the headers both ways,
// arrives as it is written, and ends cleanly (a well-formed chunked end,
// no error for the client) both when the leader changes and when the
// connection to the leader breaks.
func TestForwardStreamEndsCleanly(t *testing.T) {
	tests := []struct {
		name string
		end  func(m *Master, die chan struct{})
	}{
		{"leader changes", func(m *Master, _ chan struct{}) { m.fwd.observe("127.0.0.1:1") }},
		{"leader dies", func(_ *Master, die chan struct{}) { close(die) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			die := make(chan struct{})
			leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				w.Header().Set("Mesos-Stream-Id", "s-1")
				w.Header().Set("Content-Type", "application/recordio")
				io.WriteString(w, "got "+string(body)+" from "+r.Header.Get(ForwardedHeader)+"\n")
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
				case <-die:
					c, _, _ := w.(http.Hijacker).Hijack() // the leader's process dies
					c.Close()
				}
			}))
			defer leader.Close()
			m := &Master{log: zerolog.Nop(), self: Peer{HTTP: "follower:1"}}
			m.fwd.observe(leader.Listener.Addr().String())
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				m.forward(w, r, leader.Listener.Addr().String())
			}))
			defer front.Close()

			resp, err := http.Post(front.URL+"/api/v1/scheduler", "application/json", strings.NewReader(`{"type":"SUBSCRIBE"}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if got := resp.Header.Get("Mesos-Stream-Id"); got != "s-1" {
				t.Errorf("Mesos-Stream-Id = %q, want s-1", got)
			}
			if got := resp.Header.Get(ForwardedHeader); got != leader.Listener.Addr().String() {
				t.Errorf("%s = %q, want the leader", ForwardedHeader, got)
			}
			br := bufio.NewReader(resp.Body)
			line, err := br.ReadString('\n')
			if want := `got {"type":"SUBSCRIBE"} from follower:1` + "\n"; err != nil || line != want {
				t.Fatalf("first record = %q, %v; want %q before the stream ends", line, err, want)
			}
			if n := m.fwd.open.Load(); n != 1 {
				t.Errorf("open forwarded streams = %d, want 1", n)
			}
			tc.end(m, die)
			done := make(chan error, 1)
			go func() { _, err := io.ReadAll(br); done <- err }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("stream ended with %v, want a clean end", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("forwarded stream still open")
			}
		})
	}
}

// observe ends a generation only when the leader it names changes.
func TestForwarderGenerations(t *testing.T) {
	var f forwarder
	g0 := f.generation()
	steps := []struct {
		leader  string
		changed bool
	}{{"a:1", true}, {"a:1", false}, {"", true}, {"b:1", true}, {"b:1", false}}
	for i, s := range steps {
		if got := f.observe(s.leader); got != s.changed {
			t.Errorf("step %d observe(%q) = %v, want %v", i, s.leader, got, s.changed)
		}
	}
	select {
	case <-g0:
	default:
		t.Error("the first generation did not end")
	}
	if g := f.generation(); isClosed(g) {
		t.Error("the current generation has ended")
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
