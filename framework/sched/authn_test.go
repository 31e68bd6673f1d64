package sched

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/auth"
)

func TestCredentialSetsPrincipal(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		name string
		cred *auth.Credential
		info mesos.FrameworkInfo
		want string
	}{
		{"none", nil, mesos.FrameworkInfo{}, ""},
		{"filled in", &auth.Credential{Principal: "p", Secret: "s"}, mesos.FrameworkInfo{}, "p"},
		{"explicit kept", &auth.Credential{Principal: "p", Secret: "s"}, mesos.FrameworkInfo{Principal: str("q")}, "q"},
	}
	for _, tt := range tests {
		c := Config{Credential: tt.cred, Framework: tt.info, Logf: func(string, ...any) {}}
		c.setDefaults()
		if got := c.Framework.GetPrincipal(); got != tt.want {
			t.Errorf("%s: principal %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The default caller with a credential sends it, through mesos-go's own
// BasicAuth, on every call.
func TestCredentialCallerSendsBasic(t *testing.T) {
	got := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, s, _ := r.BasicAuth()
		got <- p + ":" + s
		auth.Unauthorized(w, "Basic", "test")
	}))
	defer srv.Close()
	c := Config{Credential: &auth.Credential{Principal: "fw", Secret: "s3"}, Logf: func(string, ...any) {}}
	c.setDefaults()
	_, err := c.Caller(srv.URL+"/api/v1/scheduler").Call(context.Background(), calls.Subscribe(&c.Framework))
	if err == nil {
		t.Fatal("a 401 must fail the call")
	}
	if g := <-got; g != "fw:s3" {
		t.Fatalf("sent %q, want fw:s3", g)
	}
}
