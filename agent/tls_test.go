package agent

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/internal/tlsconf"
)

// TestTLSAgentPlaintextOnlyForExecutors checks what each client of a TLS
// agent gets: https for everyone, plain HTTP only for the executor API
// (this test dials loopback, so it is a local peer).
func TestTLSAgentPlaintextOnlyForExecutors(t *testing.T) {
	f, err := tlsconf.DevFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := startedAgent(t, Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: t.TempDir(),
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop(), TLS: f})
	verify, _ := tlsconf.ClientFor(f.CA)
	secure := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: verify}}
	plain := &http.Client{Timeout: 5 * time.Second}
	for _, tc := range []struct {
		name    string
		cli     *http.Client
		tls     bool
		method  string
		path    string
		code    int
		refused bool
	}{
		{"https state", secure, true, http.MethodGet, "/state", 200, false},
		{"plaintext state", plain, false, http.MethodGet, "/state", 400, true},
		{"plaintext files", plain, false, http.MethodGet, "/files/browse?path=/", 400, true},
		{"plaintext executor API", plain, false, http.MethodGet, executorPath, 405, false},
		{"https executor API", secure, true, http.MethodGet, executorPath, 405, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, tlsconf.URL(tc.tls, a.Addr(), tc.path), nil)
			resp, err := tc.cli.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.code || strings.Contains(string(body), tlsconf.PlaintextRefusal) != tc.refused {
				t.Fatalf("%d %q, want %d (refused: %v)", resp.StatusCode, body, tc.code, tc.refused)
			}
		})
	}
}
