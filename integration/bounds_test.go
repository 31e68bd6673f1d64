package integration

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// TestBoundsUnderLoad is the bad-input run of the listener bounds: a real
// `allot master` process on loopback holds 5,000 idle keep-alive
// connections, 200 clients that announce 4 MiB bodies, send almost all of
// them and stall, and a 1 GiB snapshot restore, while /health is polled.
// It reports the master's peak RSS and /health's latency, and fails past
// 500 MB or 50 ms. Not run by default (minutes, thousands of sockets):
//
//	ALLOT_BOUNDS_BENCH=1 go test -count=1 -timeout 10m -run TestBoundsUnderLoad -v ./integration/
//
// The clients dial from 127.0.0.2 and up, so that the per-host cap does
// not refuse them all, and /health from 127.0.0.1.
func TestBoundsUnderLoad(t *testing.T) {
	if os.Getenv("ALLOT_BOUNDS_BENCH") == "" {
		t.Skip("set ALLOT_BOUNDS_BENCH=1 to run the listener bounds bench")
	}
	bin := filepath.Join(t.TempDir(), "allot")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/allot").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	args := []string{"master", "--listen", addr, "--work-dir", t.TempDir(), "--log-level", "error",
		"--max-snapshot-bytes", strconv.Itoa(2 << 30)} // a 1 GiB restore is streamed whole, then refused at its damaged end
	args = append(args, strings.Fields(os.Getenv("ALLOT_BOUNDS_FLAGS"))...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitHealthy(t, addr)
	base := rss(t, cmd.Process.Pid, "VmRSS")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// /health is probed through each phase, on a fresh connection each
	// time (what the connection flood delays too) and on one kept alive
	// (the master's own answer).
	fresh, kept := startHealthProbe(addr, false), startHealthProbe(addr, true)
	idle := holdIdle(ctx, t, addr, 5000)
	afterIdle := rss(t, cmd.Process.Pid, "VmRSS")
	phases := []string{"5000 idle connections opened"}
	lat := [][2]latencies{{fresh.stop(), kept.stop()}}
	fresh, kept = startHealthProbe(addr, false), startHealthProbe(addr, true)
	stalled, refused := holdStalled(ctx, t, addr, 200, 4<<20)
	afterStalled := rss(t, cmd.Process.Pid, "VmHWM")
	phases = append(phases, "200 stalled bodies")
	lat = append(lat, [2]latencies{fresh.stop(), kept.stop()})
	fresh, kept = startHealthProbe(addr, false), startHealthProbe(addr, true)
	restore := postBigSnapshot(t, addr, 1<<30)
	phases = append(phases, "1 GiB restore")
	lat = append(lat, [2]latencies{fresh.stop(), kept.stop()})
	peak := rss(t, cmd.Process.Pid, "VmHWM")
	cancel()

	t.Logf("master RSS: %d MB at start, %d MB with the idle connections, peak %d MB after the stalled bodies, peak %d MB after the restore",
		base>>20, afterIdle>>20, afterStalled>>20, peak>>20)
	t.Logf("idle keep-alive connections held: %d of 5000; stalled bodies: %d reading, %d answered 503 (body budget) or refused",
		idle.Load(), stalled, refused)
	t.Logf("1 GiB snapshot restore: %s", restore)
	for i, ph := range phases {
		for j, how := range []string{"fresh connection", "kept alive"} {
			l := lat[i][j]
			t.Logf("/health during %s, %s: %d probes, p50 %v, p99 %v, max %v, %d failed", ph, how,
				len(l.ok), l.pct(50), l.pct(99), l.pct(100), l.failed)
			if l.failed > 0 || l.pct(100) > 50*time.Millisecond {
				t.Errorf("/health during %s (%s): max %v, %d failed; want every probe under 50 ms", ph, how, l.pct(100), l.failed)
			}
		}
	}
	if peak > 500<<20 {
		t.Errorf("peak RSS %d MB, want under 500 MB", peak>>20)
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitHealthy(t *testing.T, addr string) {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("master never became healthy")
		}
	}
}

// rss reads a /proc/<pid>/status field (VmRSS, VmHWM) in bytes.
func rss(t *testing.T, pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) >= 2 && fs[0] == field+":" {
			kb, _ := strconv.ParseInt(fs[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// dialFrom dials addr from loopback address 127.0.0.<2 + i/perHost>.
func dialFrom(addr string, i, perHost int) (net.Conn, error) {
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+i/perHost))}}
	return d.Dial("tcp", addr)
}

// holdIdle opens n keep-alive connections, each after one /health, and
// keeps them until ctx ends; the count is of those still served.
func holdIdle(ctx context.Context, t *testing.T, addr string, n int) *atomic.Int64 {
	var held atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 200)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := dialFrom(addr, i, 500)
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				c.Close()
				return
			}
			resp.Body.Close()
			held.Add(1)
			go func() { <-ctx.Done(); c.Close() }()
		}()
	}
	wg.Wait()
	return &held
}

// holdStalled starts n requests announcing size bytes, sends all but 4 KiB
// and stalls; it returns once each is stalled or answered.
func holdStalled(ctx context.Context, t *testing.T, addr string, n, size int) (stalled, refused int) {
	body := make([]byte, size-4096)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialFrom(addr, 5000+i, 50) // hosts after the idle ones
			if err != nil {
				mu.Lock()
				refused++
				mu.Unlock()
				return
			}
			go func() { <-ctx.Done(); c.Close() }()
			c.SetWriteDeadline(time.Now().Add(20 * time.Second))
			fmt.Fprintf(c, "POST /api/v1/scheduler HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", size)
			_, err = c.Write(body)
			mu.Lock()
			if err != nil {
				refused++
			} else {
				stalled++
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return stalled, refused
}

// postBigSnapshot streams (chunked) size bytes of valid snapshot records
// with a damaged record at the end, and says how the master answered.
func postBigSnapshot(t *testing.T, addr string, size int) string {
	rec, err := proto.Marshal(&api.SnapshotRecord{Record: &api.SnapshotRecord_Task{Task: &api.TaskRecord{
		FrameworkId: "fw", TaskId: "t", Info: make([]byte, 64<<10)}}})
	if err != nil {
		t.Fatal(err)
	}
	frame := append([]byte(strconv.Itoa(len(rec))+"\n"), rec...)
	pr, pw := io.Pipe()
	go func() {
		for sent := 0; sent < size; sent += len(frame) {
			if _, err := pw.Write(frame); err != nil {
				return
			}
		}
		pw.Write([]byte("9\nnot proto"))
		pw.Close()
	}()
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/allot/snapshot", pr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Sprintf("error %v after %v", err, time.Since(start))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return fmt.Sprintf("%s after %v: %s", resp.Status, time.Since(start).Round(time.Millisecond), strings.TrimSpace(string(b)))
}

// healthProbe polls /health on fresh connections from 127.0.0.1.
type healthProbe struct {
	stopc chan struct{}
	done  chan latencies
}

type latencies struct {
	ok     []time.Duration
	failed int
}

func (l latencies) pct(p int) time.Duration {
	if len(l.ok) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), l.ok...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

func startHealthProbe(addr string, keepAlive bool) *healthProbe {
	p := &healthProbe{stopc: make(chan struct{}), done: make(chan latencies, 1)}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: !keepAlive}}
	go func() {
		var l latencies
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-p.stopc:
				p.done <- l
				return
			case <-tick.C:
			}
			t0 := time.Now()
			resp, err := hc.Get("http://" + addr + "/health")
			if err != nil || resp.StatusCode != 200 {
				l.failed++
				continue
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			l.ok = append(l.ok, time.Since(t0))
		}
	}()
	return p
}

func (p *healthProbe) stop() latencies {
	close(p.stopc)
	return <-p.done
}
