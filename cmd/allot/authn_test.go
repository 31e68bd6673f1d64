package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCredFlags(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	os.WriteFile(file, []byte("from-file\n"), 0o600)
	tests := []struct {
		name    string
		c       credFlags
		want    string // principal:secret
		wantErr string
	}{
		{"none", credFlags{}, ":", ""},
		{"flags", credFlags{principal: "p", secret: "s"}, "p:s", ""},
		{"file, trailing newline dropped", credFlags{principal: "p", secretFile: file}, "p:from-file", ""},
		{"both", credFlags{principal: "p", secret: "s", secretFile: file}, "", "not both"},
		{"missing file", credFlags{principal: "p", secretFile: filepath.Join(dir, "nope")}, "", "--secret-file"},
		{"no secret", credFlags{principal: "p"}, "", "needs --secret"},
		{"secret alone", credFlags{secret: "s"}, "", "need --principal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.c.credential()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got.Principal+":"+got.Secret != tt.want {
				t.Fatalf("= %+v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestAuthnFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "creds")
	os.WriteFile(good, []byte(`{"credentials":[{"principal":"a","secret":"s"}]}`), 0o600)
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("a s extra\n"), 0o600)
	tests := []struct {
		name    string
		f       authnFlags
		wantErr string
	}{
		{"off", authnFlags{}, ""},
		{"flag without file", authnFlags{frameworks: true}, "needs --credentials"},
		{"bad file names the line", authnFlags{credentials: bad, agents: true}, bad + ": line 1"},
		{"good", authnFlags{credentials: good, httpReadOnly: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := tt.f.config()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (a.Credentials != nil) != (tt.f.credentials != "") || a.HTTPReadOnly != tt.f.httpReadOnly {
				t.Fatalf("config = %+v", a)
			}
		})
	}
}

// The operator CLI's call presents the credential and turns a 401 into a
// message that says how to give one.
func TestCallPresentsCredential(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, s, ok := r.BasicAuth(); !ok || p != "ops" || s != "pw" {
			w.Header().Set("WWW-Authenticate", `Basic realm="allot"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	with := &credFlags{principal: "ops", secret: "pw"}
	if b, err := call(&http.Client{Transport: with.transport()}, addr, "GET", "/state", nil); err != nil || string(b) != "ok" {
		t.Fatalf("with the credential: %q, %v", b, err)
	}
	_, err := call(&http.Client{Transport: (&credFlags{}).transport()}, addr, "GET", "/state", nil)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "ALLOT_PRINCIPAL") {
		t.Fatalf("without: %v, want a 401 with the hint", err)
	}
}

func TestDevCredentials(t *testing.T) {
	file, op, ag, err := devCredentials(filepath.Join(t.TempDir(), "auth"))
	if err != nil {
		t.Fatal(err)
	}
	f := authnFlags{credentials: file, frameworks: true}
	a, err := f.config()
	if err != nil {
		t.Fatal(err)
	}
	if !a.Credentials.Verify(op.Principal, op.Secret) || !a.Credentials.Verify(ag.Principal, ag.Secret) || op.Secret == ag.Secret {
		t.Fatalf("dev credentials %+v %+v do not verify against %s", op, ag, file)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v, want 0600", fi.Mode().Perm())
	}
}

// The agent's HTTP authentication flags: a flag without credentials to
// check against, and a bad file, are usage errors naming the flag.
func TestAgentHTTPFlags(t *testing.T) {
	dir := t.TempDir()
	creds, acls, bad := filepath.Join(dir, "creds"), filepath.Join(dir, "acls.json"), filepath.Join(dir, "bad")
	os.WriteFile(creds, []byte("alice s3cret\n"), 0o600)
	os.WriteFile(acls, []byte(`{"access_sandboxes":[{"principals":{"values":["alice"]},"users":{"type":"ANY"}}]}`), 0o600)
	os.WriteFile(bad, []byte(`{"acces_sandboxes":[]}`), 0o600)
	tests := []struct {
		name    string
		f       agentHTTPFlags
		wantErr string
	}{
		{"off", agentHTTPFlags{}, ""},
		{"readonly without credentials", agentHTTPFlags{readOnly: true}, "need --http-credentials"},
		{"readwrite without credentials", agentHTTPFlags{readWrite: true}, "need --http-credentials"},
		{"both with credentials and acls", agentHTTPFlags{credentials: creds, acls: acls, readOnly: true, readWrite: true}, ""},
		{"missing credentials file", agentHTTPFlags{credentials: filepath.Join(dir, "nope"), readOnly: true}, "--http-credentials"},
		{"misspelt acl", agentHTTPFlags{acls: bad}, "--acls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, authz, err := tt.f.config()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.ReadOnly != tt.f.readOnly || h.ReadWrite != tt.f.readWrite || (tt.f.credentials != "") != (h.Credentials != nil) || (tt.f.acls != "") != (authz != nil) {
				t.Fatalf("config() = %+v, %v from %+v", h, authz, tt.f)
			}
		})
	}
}
