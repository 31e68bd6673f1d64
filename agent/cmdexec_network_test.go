package agent

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/cni"
)

// A task in a network namespace of its own is health-checked there: its
// HTTP and TCP checks reach the port it listens on inside, which the
// host's loopback does not have.
func TestHealthProbesInTaskNetNS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace; running as uid", os.Geteuid())
	}
	ns := filepath.Join(t.TempDir(), "ns")
	if err := cni.NewNetNS(ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cni.RemoveNetNS(ns) })
	var ln net.Listener
	if err := cni.InNetNS(ns, func() (err error) {
		ln, err = net.Listen("tcp4", "127.0.0.1:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	port := uint32(ln.Addr().(*net.TCPAddr).Port)
	checks := map[string]*mesos.HealthCheck{
		"http": {Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: port}},
		"tcp":  {Type: mesos.HealthCheck_TCP, TCP: &mesos.HealthCheck_TCPCheckInfo{Port: port}},
	}
	// Whether the host's loopback has the port free, so that a probe from
	// the host must fail.
	hostFree := false
	if l, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(int(port))); err == nil {
		l.Close()
		hostFree = true
	}
	for name, hc := range checks {
		t.Run(name, func(t *testing.T) {
			if err := proberInNetNS(newProber(hc, t.TempDir(), nil, nil), ns).probe(context.Background()); err != nil {
				t.Fatalf("probe in the task's namespace: %v", err)
			}
			if hostFree {
				if err := newProber(hc, t.TempDir(), nil, nil).probe(context.Background()); err == nil {
					t.Fatalf("probe from the host's namespace passed: the test's port is not the task's alone")
				}
			}
		})
	}
}
