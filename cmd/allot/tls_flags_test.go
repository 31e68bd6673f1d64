package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/allot-sched/allot/internal/tlsconf"
)

// TestTLSFlags checks the TLS flags' usage errors and that a bad file
// fails a master or agent at start, naming the flag.
func TestTLSFlags(t *testing.T) {
	dir := t.TempDir()
	f, err := tlsconf.DevFiles(filepath.Join(dir, "pki"))
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"master", "--help"}, 0, "-tls-ca file"},
		{[]string{"agent", "--help"}, 0, "-tls-cert file"},
		{[]string{"status", "--help"}, 0, "ALLOT_TLS_CA"},
		{[]string{"master", "--work-dir", work, "--raft-addr", "127.0.0.1:1", "--peers", "127.0.0.1:1",
			"--tls-cert", f.Cert, "--tls-key", f.Key}, 2, "needs --tls-ca"},
		{[]string{"master", "--work-dir", work, "--listen", "127.0.0.1:0", "--tls-cert", f.Cert}, 1, "--tls-cert needs --tls-key"},
		{[]string{"agent", "--work-dir", work, "--listen", "127.0.0.1:0", "--tls-cert", f.Cert, "--tls-key", f.Key,
			"--tls-ca", filepath.Join(dir, "missing.pem")}, 1, "--tls-ca"},
	} {
		var out, errb bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- run(tc.args, &out, &errb) }()
		select {
		case code := <-done:
			if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
				t.Errorf("allot %v: exit %d, output %q; want %d with %q", tc.args, code, out.String()+errb.String(), tc.code, tc.want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("allot %v did not exit (it should fail before serving)", tc.args)
		}
	}
}
