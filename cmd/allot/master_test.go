package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/allot-sched/allot/master"
)

func TestParseWeights(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]float64
		err  string
	}{
		{"", map[string]float64{}, ""},
		{"prod=2,dev=0.5", map[string]float64{"prod": 2, "dev": 0.5}, ""},
		{"prod", nil, "want role=weight"},
		{"prod=0", nil, "positive"},
		{"prod=x", nil, "positive"},
		{"=3", nil, "want role=weight"},
		{"eng=2,eng/ml=3", map[string]float64{"eng": 2, "eng/ml": 3}, ""},
		{"eng//ml=3", nil, `"eng//ml=3"`},
		{"eng/..=3", nil, `"eng/..=3"`},
	}
	for _, tc := range tests {
		got, err := parseWeights(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseWeights(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("parseWeights(%q) = %v, %v", tc.in, got, err)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("parseWeights(%q)[%s] = %v, want %v", tc.in, k, got[k], v)
			}
		}
	}
}

func TestParseAttributes(t *testing.T) {
	got, err := parseAttributes("rack:r1; zone:a")
	if err != nil || got["rack"] != "r1" || got["zone"] != "a" {
		t.Errorf("parseAttributes = %v, %v", got, err)
	}
	if _, err := parseAttributes("rack"); err == nil {
		t.Error("attribute without a value accepted")
	}
}

// Usage errors exit 2 with a message; --help exits 0 and explains flags.
func TestMasterAgentRunUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"master"}, 2, "--work-dir is required"},
		{[]string{"master", "--help"}, 0, "-allocation-interval duration"},
		{[]string{"master", "--work-dir", "x", "--weights", "a"}, 2, "--weights"},
		{[]string{"master", "--work-dir", "x", "--max-completed-tasks-per-framework", "0"}, 2, "must be at least 1"},
		{[]string{"master", "--help"}, 0, "-max-completed-frameworks"},
		{[]string{"master", "--work-dir", "x", "--registry-max-agent-count", "0"}, 2, "--registry-max-agent-count at least 1"},
		{[]string{"master", "--help"}, 0, "-registry-max-agent-age"},
		{[]string{"agent"}, 2, "--work-dir is required"},
		{[]string{"agent", "--help"}, 0, "-resources spec"},
		{[]string{"run"}, 2, "no command"},
		{[]string{"run", "--cpus", "0", "--", "true"}, 2, "positive"},
		{[]string{"dev", "--agents", "-1"}, 2, "--agents"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("allot %v: exit %d, output %q; want %d with %q", tc.args, code, errb.String(), tc.code, tc.want)
		}
	}
}

func TestParsePeers(t *testing.T) {
	got, err := parsePeers("a:5049, b:5049,10.0.0.3:6049=10.0.0.3:6050", ":5050")
	if err != nil {
		t.Fatal(err)
	}
	want := []master.Peer{{Raft: "a:5049", HTTP: "a:5050"}, {Raft: "b:5049", HTTP: "b:5050"}, {Raft: "10.0.0.3:6049", HTTP: "10.0.0.3:6050"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"a", "a:1,a:1", "a:1=b", ":5049"} {
		if _, err := parsePeers(bad, ":5050"); err == nil {
			t.Errorf("parsePeers(%q) accepted", bad)
		}
	}
}
