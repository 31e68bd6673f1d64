package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/master"
)

// showPolicy prints the bandit's matrix as a table and other models as
// JSON; a bad answer is an error.
func TestShowPolicy(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       []string
		err        bool
	}{
		{"bandit", `{"sorter":"bandit","models":[{"name":"bandit","state":{"prefs":{"types":["A","B"],"h":[[0.5,-0.25],[0,0]],"row_n":[3,0]},"types":{"f1":"A"}}}],
			"replicated":{"sorter":"bandit","updated_unix_nano":0,"bytes":120,"current":true}}`,
			[]string{"sorter: bandit", "120 bytes for --sorter bandit at 1970-01-01T00:00:00Z, current", "running \\ queued", "0.5000", "-0.2500", "map[f1:A]"}, false},
		{"timelines", `{"sorter":"prophet","models":[{"name":"timelines","state":{"WaitN":2}}]}`,
			[]string{"replicated: none yet", "model timelines:", `"WaitN": 2`}, false},
		{"no models", `{"sorter":"drf","models":[]}`, []string{"keeps no state"}, false},
		{"bad answer", `<html>`, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := showPolicy([]byte(c.body), &out)
			if (err != nil) != c.err {
				t.Fatalf("error %v, want error %v", err, c.err)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

// allot operator policy show against a running lone master.
func TestOperatorPolicyShow(t *testing.T) {
	m, err := master.New(master.Config{Listen: "127.0.0.1:0", WorkDir: t.TempDir(), Sorter: "bandit", Mode: "characterized", Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	defer m.Stop(context.Background())
	var out, errOut bytes.Buffer
	if err := runOperator([]string{"policy", "show", "--master", m.Addr()}, &out, &errOut); err != nil {
		t.Fatalf("policy show: %v (%s)", err, errOut.String())
	}
	for _, w := range []string{"sorter: bandit", "replicated: none yet", "model bandit:", "running \\ queued"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}
