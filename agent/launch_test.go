package agent

import (
	"testing"
	"time"

	mesostime "github.com/mesos/mesos-go/api/v1/lib/time"
)

func TestMesosDuration(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{5 * time.Second, "5secs"},
		{15 * time.Minute, "15mins"},
		{250 * time.Millisecond, "250ms"},
		{90 * time.Second, "90secs"},
	}
	for _, tc := range tests {
		got := mesosDuration(tc.d)
		if got != tc.want {
			t.Errorf("mesosDuration(%v) = %q, want %q", tc.d, got, tc.want)
		}
		// mesos-go's executor config must read it back.
		back, err := mesostime.ParseDuration(got)
		if err != nil || back != tc.d {
			t.Errorf("mesos-go parses %q as %v, %v; want %v", got, back, err, tc.d)
		}
	}
}
