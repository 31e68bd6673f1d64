package tlsconf

import (
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := DevFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	other, err := DevFiles(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	expiredCA, err := NewAuthority("expired", -time.Minute) // NotAfter a minute ago
	if err != nil {
		t.Fatal(err)
	}
	expired, err := expiredCA.WriteFiles(filepath.Join(dir, "expired"), "node", "n", LocalHosts)
	if err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "garbage.pem")
	os.WriteFile(notPEM, []byte("not a certificate\n"), 0o644)
	for _, tc := range []struct {
		name string
		f    Files
		want string // "" means success
	}{
		{"off", Files{}, ""},
		{"complete", good, ""},
		{"no CA", Files{Cert: good.Cert, Key: good.Key}, ""},
		{"cert without key", Files{Cert: good.Cert}, "--tls-cert needs --tls-key"},
		{"key without cert", Files{Key: good.Key}, "--tls-key needs --tls-cert"},
		{"CA alone", Files{CA: good.CA}, "--tls-ca needs --tls-cert"},
		{"missing cert file", Files{Cert: filepath.Join(dir, "nope.pem"), Key: good.Key}, "no such file"},
		{"mismatched key", Files{Cert: good.Cert, Key: other.Key}, "private key does not match"},
		{"CA not PEM", Files{Cert: good.Cert, Key: good.Key, CA: notPEM}, "no PEM certificate"},
		{"missing CA", Files{Cert: good.Cert, Key: good.Key, CA: filepath.Join(dir, "none.pem")}, "--tls-ca"},
		{"expired", expired, "valid only from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Load(tc.f)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if (b != nil) != tc.f.Enabled() || b.HasCA() != (tc.f.CA != "") {
					t.Fatalf("bundle %v, HasCA %v for %+v", b != nil, b.HasCA(), tc.f)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestURL(t *testing.T) {
	for _, tc := range []struct {
		secure     bool
		addr, want string
	}{
		{false, "m:5050", "http://m:5050/state"},
		{true, "m:5050", "https://m:5050/state"},
		{false, "https://m:5050", "https://m:5050/state"},
		{true, "http://m:5050/", "http://m:5050/state"},
	} {
		if got := URL(tc.secure, tc.addr, "/state"); got != tc.want {
			t.Errorf("URL(%v, %q) = %q, want %q", tc.secure, tc.addr, got, tc.want)
		}
	}
	if got := HostPort("https://m:5050/x"); got != "m:5050" {
		t.Errorf("HostPort = %q", got)
	}
}

// TestExplain runs real clients against real servers with every mismatch
// an operator meets and checks the message says what to do.
func TestExplain(t *testing.T) {
	f, err := DevFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	tlsSrv := httptest.NewUnstartedServer(ok)
	tlsSrv.TLS = b.Server()
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plainSrv := httptest.NewServer(ok)
	defer plainSrv.Close()
	tlsAddr := strings.TrimPrefix(tlsSrv.URL, "https://")
	plainAddr := strings.TrimPrefix(plainSrv.URL, "http://")

	verified, _ := ClientFor(f.CA)
	get := func(cfg *tls.Config, url string) (*http.Response, error) {
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		return c.Get(url)
	}

	t.Run("verified", func(t *testing.T) {
		resp, err := get(verified, URL(true, tlsAddr, "/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	t.Run("plaintext to TLS", func(t *testing.T) {
		start := time.Now()
		resp, err := get(nil, URL(false, tlsAddr, "/"))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !IsPlaintextRefusal(resp.StatusCode, body) {
			t.Fatalf("got %d %q, want Go's refusal", resp.StatusCode, body)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("refusal took %v", d)
		}
		if e := Refused(tlsAddr); !errors.Is(e, ErrSpeaksTLS) || !strings.Contains(e.Error(), "--tls-ca") {
			t.Fatalf("Refused: %v", e)
		}
	})
	for _, tc := range []struct {
		name string
		cfg  *tls.Config
		url  string
		want string
	}{
		{"unknown CA", &tls.Config{}, URL(true, tlsAddr, "/"), "pass --tls-ca"},
		{"wrong name", &tls.Config{RootCAs: verified.RootCAs, ServerName: "example.com"}, URL(true, tlsAddr, "/"), "127.0.0.1"},
		{"TLS to plaintext", verified, URL(true, plainAddr, "/"), "does not speak TLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := get(tc.cfg, tc.url)
			if err == nil {
				t.Fatal("call succeeded")
			}
			if e := Explain(err, "master"); !strings.Contains(e.Error(), tc.want) || !strings.HasPrefix(e.Error(), "master") {
				t.Fatalf("Explain: %v, want %q", e, tc.want)
			}
		})
	}
	if err := Explain(errors.New("connection refused"), "m"); err.Error() != "connection refused" {
		t.Fatalf("a non-TLS error changed: %v", err)
	}
}

func TestExplainedErrorsMatch(t *testing.T) {
	if !errors.Is(Refused("m"), ErrSpeaksTLS) || !errors.Is(Refused("m"), ErrTLS) {
		t.Error("Refused does not match ErrSpeaksTLS and ErrTLS")
	}
	inner := errors.New("x: " + PlaintextRefusal)
	e := Explain(inner, "m")
	if !errors.Is(e, ErrSpeaksTLS) || !errors.Is(e, ErrTLS) || !strings.Contains(e.Error(), "m speaks TLS") {
		t.Errorf("Explain of a refusal: %v", e)
	}
	if errors.Is(Explain(errors.New("connection refused"), "m"), ErrTLS) {
		t.Error("a plain network error matches ErrTLS")
	}
}
