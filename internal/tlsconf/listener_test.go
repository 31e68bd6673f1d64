package tlsconf

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestSniffListener serves one port to TLS clients and, when allow says
// so, to plaintext ones, and checks each is answered as it should be.
func TestSniffListener(t *testing.T) {
	f, err := DevFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	client, _ := ClientFor(f.CA)
	for _, tc := range []struct {
		name        string
		allow       func(net.Conn) bool
		plainStatus int
	}{
		{"local plaintext allowed", LocalPeer, http.StatusOK},
		{"plaintext refused", func(net.Conn) bool { return false }, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ln := NewSniffListener(raw, b.Server(), tc.allow)
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.TLS != nil {
					io.WriteString(w, "tls")
				} else {
					io.WriteString(w, "plain")
				}
			})}
			go srv.Serve(ln)
			defer srv.Close()
			addr := raw.Addr().String()

			// A silent connection must not hold up the others.
			idle, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer idle.Close()

			hc := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: client}}
			resp, err := hc.Get(URL(true, addr, "/"))
			if err != nil {
				t.Fatalf("TLS client: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "tls" {
				t.Fatalf("TLS client got %q", body)
			}
			resp, err = hc.Get(URL(false, addr, "/"))
			if err != nil {
				t.Fatalf("plaintext client: %v", err)
			}
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.plainStatus {
				t.Fatalf("plaintext client: %d %q, want %d", resp.StatusCode, body, tc.plainStatus)
			}
			if tc.plainStatus == http.StatusOK && string(body) != "plain" {
				t.Fatalf("plaintext client got %q", body)
			}
			if tc.plainStatus != http.StatusOK && !IsPlaintextRefusal(resp.StatusCode, body) {
				t.Fatalf("plaintext client got %q, not Go's refusal", body)
			}
		})
	}
}
