package main

import (
	"io"
	"testing"
)

func TestRunGPUs(t *testing.T) {
	tests := []struct {
		args    []string
		gpus    float64
		capable bool
		wantErr bool
	}{
		{[]string{"--", "true"}, 0, false, false},
		{[]string{"--gpus", "2", "--", "nvidia-smi", "-L"}, 2, true, false},
		{[]string{"--gpus", "-1", "--", "true"}, 0, false, true},
	}
	for _, tc := range tests {
		o, err := parseRunFlags(tc.args, io.Discard)
		if (err != nil) != tc.wantErr {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if err != nil {
			continue
		}
		if g := o.task.need.Scalar("gpus").Units(); g != tc.gpus || (len(runCapabilities(o.task.need)) > 0) != tc.capable {
			t.Errorf("%v: gpus %v capabilities %v", tc.args, g, runCapabilities(o.task.need))
		}
	}
}
