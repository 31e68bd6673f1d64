package master

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/internal/limits"
)

// startBoundedMaster is startMaster with the listener's bounds set.
func startBoundedMaster(t *testing.T, s limits.Server) *Master {
	t.Helper()
	return startMasterWith(t, Config{Listen: "127.0.0.1:0", WorkDir: t.TempDir(), AllocationInterval: 50 * time.Millisecond,
		HeartbeatInterval: 20 * time.Millisecond, Log: zerolog.Nop(), HTTP: s})
}

// rawConn dials the master with a generous deadline: tests wait on what
// the master does, not on a fixed time.
func rawConn(t *testing.T, m *Master) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	t.Cleanup(func() { c.Close() })
	return c
}

func TestStalledSchedulerBodyIsCut(t *testing.T) {
	m := startBoundedMaster(t, limits.Server{BodyTimeout: 100 * time.Millisecond})
	c := rawConn(t, m)
	fmt.Fprintf(c, "POST /api/v1/scheduler HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{\"type\":")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), "not received in time") {
		t.Fatalf("stalled body: %d %q, want 408", resp.StatusCode, b)
	}
}

func TestSubscriptionOutlivesTheBodyTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	m := startBoundedMaster(t, limits.Server{BodyTimeout: timeout})
	body := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n"}}}`
	resp, err := http.Post("http://"+m.Addr()+"/api/v1/scheduler", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	rd := recordio.NewReader(resp.Body)
	// Heartbeats keep coming for several body timeouts.
	for n := 0; time.Since(start) < 5*timeout; n++ {
		frame, err := rd.ReadFrame()
		if err != nil {
			t.Fatalf("stream ended after %v (event %d): %v", time.Since(start), n, err)
		}
		var ev scheduler.Event
		if err := json.Unmarshal(frame, &ev); err != nil {
			t.Fatal(err)
		}
	}
}

func TestIdleConnectionIsClosed(t *testing.T) {
	m := startBoundedMaster(t, limits.Server{IdleTimeout: 50 * time.Millisecond})
	c := rawConn(t, m)
	fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle keep-alive: read %v, want EOF (closed by the master)", err)
	}
}

func TestConnectionsPerHostCapped(t *testing.T) {
	m := startBoundedMaster(t, limits.Server{MaxConnsPerHost: 3})
	var held []*bufio.Reader
	for range 3 {
		c := rawConn(t, m)
		fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
		br := bufio.NewReader(c)
		if _, err := http.ReadResponse(br, nil); err != nil {
			t.Fatalf("a connection within the cap: %v", err)
		}
		held = append(held, br)
	}
	c := rawConn(t, m)
	fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
		t.Fatalf("the 4th connection from one host answered %d; want it closed", resp.StatusCode)
	}
	// The refusal is counted just after the close the client saw.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		got := metricValue(t, m, "allot_master_http_connections_open", "")
		refused := metricValue(t, m, "allot_master_http_connections_refused_total", "address")
		if got == 3 && refused == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("open %v refused %v; want 3 and 1", got, refused)
		}
	}
}

// metricValue is the value of the master's metric name (with label value
// label, if any).
func metricValue(t *testing.T, m *Master, name, label string) float64 {
	t.Helper()
	fams, err := m.m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, mt := range f.GetMetric() {
			if label != "" && (len(mt.GetLabel()) == 0 || mt.GetLabel()[0].GetValue() != label) {
				continue
			}
			if g := mt.GetGauge(); g != nil {
				return g.GetValue()
			}
			return mt.GetCounter().GetValue()
		}
	}
	return 0
}
