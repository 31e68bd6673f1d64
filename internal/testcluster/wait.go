package testcluster

import (
	"net"
	"sync"
	"testing"
	"time"
)

// PollInterval is how often WaitFor evaluates its condition.
const PollInterval = 10 * time.Millisecond

// WaitFor polls cond every PollInterval until it holds or timeout passes;
// then it fails the test saying what it waited for.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	WaitEvery(t, timeout, PollInterval, what, cond)
}

// WaitEvery is WaitFor polling every interval: unit tests against
// in-process fakes poll faster than PollInterval, which is set for
// asking a real process over HTTP.
func WaitEvery(t testing.TB, timeout, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
}

// FreePort returns a loopback address (127.0.0.1:port) whose port was
// free a moment ago and that no earlier call in this process returned:
// the kernel may hand a just-closed ephemeral port out again, and two
// masters of one test given the same port fail at start ("listed twice").
// Another process may still take the port before the caller listens;
// tests accept that race for the simplicity of passing addresses on
// command lines.
func FreePort(t testing.TB) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if !handedOut.ports[addr] {
			handedOut.ports[addr] = true
			return addr
		}
	}
}

// handedOut is every address FreePort has returned in this process.
var handedOut = struct {
	sync.Mutex
	ports map[string]bool
}{ports: map[string]bool{}}
