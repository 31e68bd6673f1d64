package testcluster

import (
	"fmt"
	"math/rand"
	"net"
	"os"
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
// free a moment ago and that no earlier call in this process returned.
// Ports come from below the kernel's ephemeral range (10000-29999, under
// the agents' default task ports): a port taken from that range by
// listening on :0 and closing could be handed straight to the next :0
// listener in the test (a raft proxy, an HTTP test server), and two
// listeners given one address fail at start ("listed twice"). Another
// process may still take the port before the caller listens; tests accept
// that race for the simplicity of passing addresses on command lines.
func FreePort(t testing.TB) string {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	for tries := 0; tries < 1000; tries++ {
		addr := fmt.Sprintf("127.0.0.1:%d", freePortLow+handedOut.rnd.Intn(freePortHigh-freePortLow))
		if handedOut.ports[addr] {
			continue
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			continue // in use
		}
		l.Close()
		handedOut.ports[addr] = true
		return addr
	}
	t.Fatalf("no free loopback port in %d-%d after 1000 tries", freePortLow, freePortHigh-1)
	return ""
}

// The range FreePort draws from: below Linux's default ephemeral range
// (32768-60999) and the agents' default task ports (31000-32000).
const freePortLow, freePortHigh = 10000, 30000

// handedOut is every address FreePort has returned in this process, and
// its draw (seeded per process, so parallel test binaries spread out).
var handedOut = struct {
	sync.Mutex
	ports map[string]bool
	rnd   *rand.Rand
}{ports: map[string]bool{}, rnd: rand.New(rand.NewSource(time.Now().UnixNano() ^ int64(os.Getpid())))}
