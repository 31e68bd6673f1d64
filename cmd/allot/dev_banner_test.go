package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/master"
)

// With --auth or --tls, the banner exports what the CLI needs before any
// command, every curl carries the CA and credential, and nothing that
// cannot log in (msh) is suggested.
func TestDevBanner(t *testing.T) {
	tlsFiles := tlsconf.Files{CA: "/d/tls/ca.pem", Cert: "/d/tls/node.pem", Key: "/d/tls/node-key.pem"}
	for _, tc := range []struct {
		name       string
		tls, auth  bool
		want, lack []string
	}{
		{"plain", false, false, []string{"Try:", "allot run --master 127.0.0.1:5050", "curl -s http://127.0.0.1:5050/state", "msh"}, []string{"export"}},
		{"auth and tls", true, true, []string{"export ALLOT_TLS_CA=/d/tls/ca.pem ALLOT_PRINCIPAL=dev ALLOT_SECRET_FILE=/d/auth/secret",
			"curl -s --cacert /d/tls/ca.pem -u dev:s3cret https://127.0.0.1:5050/state"}, []string{"msh", "curl -s http"}},
		{"auth", false, true, []string{"export ALLOT_PRINCIPAL=dev", "curl -s -u dev:s3cret http://"}, []string{"msh"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &devFlags{agents: 2, resources: "cpus:4", tls: tc.tls, auth: tc.auth}
			cfg := master.Config{}
			if tc.tls {
				cfg.TLS = tlsFiles
			}
			var out bytes.Buffer
			printDevBanner(&out, f, devAuth{opCred: auth.Credential{Principal: "dev", Secret: "s3cret"}}, cfg, "127.0.0.1:5050", "/d")
			s := out.String()
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("banner lacks %q:\n%s", w, s)
				}
			}
			for _, l := range tc.lack {
				if strings.Contains(s, l) {
					t.Errorf("banner has %q:\n%s", l, s)
				}
			}
			if tc.tls || tc.auth {
				if strings.Index(s, "export") > strings.Index(s, "Try:") {
					t.Errorf("the exports come after Try:\n%s", s)
				}
			}
		})
	}
}
