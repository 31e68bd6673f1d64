package operator

import (
	"slices"
	"testing"
)

func TestTaskImageAndAddresses(t *testing.T) {
	img := func(n string) *Container {
		return &Container{Type: "MESOS", Mesos: &MesosContainer{Image: &Image{Type: "DOCKER", Docker: &DockerImage{Name: n}}}}
	}
	withIPs := func(ips ...string) TaskStatus {
		ni := NetworkInfo{Name: "net1"}
		for _, ip := range ips {
			ni.IPAddresses = append(ni.IPAddresses, IPAddress{Protocol: "IPv4", IPAddress: ip})
		}
		return TaskStatus{State: "TASK_RUNNING", ContainerStatus: &ContainerStatus{NetworkInfos: []NetworkInfo{ni}}}
	}
	cases := []struct {
		name  string
		task  Task
		image string
		addrs []string
	}{
		{"host", Task{Statuses: []TaskStatus{{State: "TASK_RUNNING"}}}, "", nil},
		{"own image", Task{Container: img("busybox:1"), ExecutorContainer: img("ignored:1")}, "busybox:1", nil},
		{"executor's image", Task{ExecutorContainer: img("exec:2")}, "exec:2", nil},
		{"no image, a network", Task{Container: &Container{Type: "MESOS"}, Statuses: []TaskStatus{withIPs("10.0.0.1")}}, "", []string{"net1/10.0.0.1"}},
		{"latest status with addresses wins", Task{Statuses: []TaskStatus{withIPs("10.0.0.1"), withIPs("10.0.0.2", "10.0.0.3"), {State: "TASK_FINISHED"}}},
			"", []string{"net1/10.0.0.2", "net1/10.0.0.3"}},
	}
	for _, c := range cases {
		if got := c.task.Image(); got != c.image {
			t.Errorf("%s: image %q, want %q", c.name, got, c.image)
		}
		if got := c.task.Addresses(); !slices.Equal(got, c.addrs) {
			t.Errorf("%s: addresses %q, want %q", c.name, got, c.addrs)
		}
	}
}
