package agent

import (
	"errors"
	"strings"
	"testing"
)

func TestStartFailureNamesTheSandbox(t *testing.T) {
	dir := t.TempDir()
	exit := errors.New("fork/exec /bin/sh: no such file or directory")
	for _, tc := range []struct {
		sandbox string
		want    []string
	}{
		{dir, []string{"in sandbox " + dir, "fork/exec /bin/sh"}},
		{"a/slaves/S1/frameworks/F/executors/E/runs/R", []string{"sandbox a/slaves/S1/frameworks/F/executors/E/runs/R", "is not there", "seen from /"}},
	} {
		got := startFailure(tc.sandbox, exit)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("startFailure(%q) = %q, want it to say %q", tc.sandbox, got, w)
			}
		}
	}
}
