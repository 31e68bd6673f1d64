package main

import (
	"strings"
	"testing"
)

func TestParseQuotaScalars(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]float64
		err  string
	}{
		{"", nil, ""},
		{"cpus:4;mem:4096", map[string]float64{"cpus": 4, "mem": 4096}, ""},
		{" cpus : 0 ", map[string]float64{"cpus": 0}, ""},
		{"cpus", nil, `"cpus" is not name:amount`},
		{"cpus:x", nil, "the amount is not a number"},
		{"cpus:NaN", nil, "the amount is not a number"},
		{"cpus:1;cpus:2", nil, "cpus given twice"},
	}
	for _, tt := range tests {
		got, err := parseQuotaScalars(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseQuotaScalars(%q): %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("parseQuotaScalars(%q) = %v, %v", tt.in, got, err)
		}
		for k, v := range tt.want {
			if got[k].Value != v {
				t.Errorf("parseQuotaScalars(%q)[%s] = %v, want %v", tt.in, k, got[k].Value, v)
			}
		}
	}
}

func TestQuotaVerbUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"frob"}, {"set"}, {"get", "extra"}, {"set", "eng", "--limit", "cpus"}} {
		var out, errb strings.Builder
		if err := runQuota(args, &out, &errb); err == nil {
			t.Errorf("allot quota %v: no error", args)
		}
	}
}
