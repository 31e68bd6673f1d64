package agent

import (
	"strings"
	"testing"

	"github.com/allot-sched/allot/resources"
)

func TestThrottleEnv(t *testing.T) {
	for _, c := range []struct {
		name string
		on   bool
		res  string
		want string
	}{
		{"off", false, "cpus:1;disk_bw:20;net_bw:10", ""},
		{"both bandwidths", true, "cpus:1;disk_bw:20;net_bw:12.5", "ALLOT_IO_THROTTLE_DIR=/w/io-throttle ALLOT_IO_DISK_BW=20 ALLOT_IO_NET_BW=12.5"},
		{"disk only", true, "cpus:1;disk_bw:20", "ALLOT_IO_THROTTLE_DIR=/w/io-throttle ALLOT_IO_DISK_BW=20"},
	} {
		a := &Agent{cfg: Config{ThrottleIO: c.on, WorkDir: "/w"}, total: resources.MustParse(c.res)}
		if got := strings.Join(a.throttleEnv(), " "); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
