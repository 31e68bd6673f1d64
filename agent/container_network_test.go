package agent

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Networks are refused only on the tasks of a group, which share their
// executor's; a command task's, a custom executor's and a task group's
// executor's go to the CNI isolator, and unnamed NetworkInfos are the
// host's network.
func TestNetworkRefusal(t *testing.T) {
	named := &mesos.ContainerInfo{NetworkInfos: []mesos.NetworkInfo{{Name: strPtr("n1")}}}
	unnamed := &mesos.ContainerInfo{NetworkInfos: []mesos.NetworkInfo{{}}}
	cases := []struct {
		name string
		o    runOrder
		want string
	}{
		{"task group executor with a network", runOrder{command: true, exInfo: mesos.ExecutorInfo{Container: named}}, ""},
		{"task group's task with a network", runOrder{command: true, tasks: []mesos.TaskInfo{{Container: named}}}, "share their executor's network"},
		{"task group's task, unnamed", runOrder{command: true, tasks: []mesos.TaskInfo{{Container: unnamed}}}, ""},
		{"command task", runOrder{command: true, commandTask: true, exInfo: mesos.ExecutorInfo{Container: named}}, ""},
		{"custom executor", runOrder{exInfo: mesos.ExecutorInfo{Container: named}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := networkRefusal(&c.o)
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Fatalf("networkRefusal = %q, want %q", got, c.want)
			}
		})
	}
}
