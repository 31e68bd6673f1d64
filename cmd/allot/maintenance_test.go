package main

import "testing"

func TestParseMachine(t *testing.T) {
	tests := []struct {
		in       string
		host, ip string
		hasHost  bool
		hasIP    bool
	}{
		{"h1", "h1", "", true, false},
		{"h1/10.0.0.1", "h1", "10.0.0.1", true, true},
		{"/10.0.0.1", "", "10.0.0.1", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := parseMachine(tc.in)
			if got.GetHostname() != tc.host || got.GetIP() != tc.ip || (got.Hostname != nil) != tc.hasHost || (got.IP != nil) != tc.hasIP {
				t.Fatalf("parseMachine(%q) = %v", tc.in, got)
			}
		})
	}
}
