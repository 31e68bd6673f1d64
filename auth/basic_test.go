package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckBasic(t *testing.T) {
	c, _ := NewCredentials([]Credential{{"alice", "s3cret"}})
	tests := []struct {
		name    string
		set     func(r *http.Request)
		want    string
		problem string
	}{
		{"none", func(*http.Request) {}, "", "no Authorization header"},
		{"right", func(r *http.Request) { r.SetBasicAuth("alice", "s3cret") }, "alice", ""},
		{"wrong secret", func(r *http.Request) { r.SetBasicAuth("alice", "nope") }, "", `principal "alice": unknown principal or wrong secret`},
		{"unknown", func(r *http.Request) { r.SetBasicAuth("mallory", "s3cret") }, "", `principal "mallory"`},
		{"bearer", func(r *http.Request) { r.Header.Set("Authorization", "Bearer x") }, "", `scheme "Bearer"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/state", nil)
			tt.set(r)
			p, problem := CheckBasic(r, c)
			if p != tt.want || (tt.problem == "") != (problem == "") || !strings.Contains(problem, tt.problem) {
				t.Fatalf("= %q, %q; want %q, %q", p, problem, tt.want, tt.problem)
			}
		})
	}
}

func TestUnauthorized(t *testing.T) {
	w := httptest.NewRecorder()
	Unauthorized(w, "Basic", "no %s", "credential")
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != `Basic realm="allot"` || w.Body.String() != "no credential\n" {
		t.Fatalf("got %d %q %q", w.Code, w.Header().Get("WWW-Authenticate"), w.Body.String())
	}
}

func TestBasicTransport(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
	}))
	defer srv.Close()
	tests := []struct {
		name string
		cred Credential
		set  string
		want string
	}{
		{"adds", Credential{"a", "s"}, "", "Basic YTpz"},
		{"zero adds nothing", Credential{}, "", ""},
		{"keeps the caller's", Credential{"a", "s"}, "Bearer t", "Bearer t"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		if tt.set != "" {
			req.Header.Set("Authorization", tt.set)
		}
		resp, err := (&http.Client{Transport: &BasicTransport{Cred: tt.cred}}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got != tt.want {
			t.Errorf("%s: Authorization %q, want %q", tt.name, got, tt.want)
		}
		if req.Header.Get("Authorization") != tt.set {
			t.Errorf("%s: the caller's request was modified", tt.name)
		}
	}
}
