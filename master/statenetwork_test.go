package master

import (
	"encoding/json"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// A task's status history in /state carries its container's addresses
// as Mesos writes container_status; a status without one (the host's
// network) writes none.
func TestStateContainerStatus(t *testing.T) {
	name, ip, proto := "net1", "10.77.0.2", "tcp"
	cases := []struct {
		name string
		in   *mesos.ContainerStatus
		want string
	}{
		{"none", nil, "null"},
		{"empty", &mesos.ContainerStatus{}, "null"},
		{"cni", &mesos.ContainerStatus{ContainerID: &mesos.ContainerID{Value: "c1"}, NetworkInfos: []mesos.NetworkInfo{{Name: &name,
			IPAddresses:  []mesos.NetworkInfo_IPAddress{{Protocol: mesos.IPv4.Enum(), IPAddress: &ip}},
			PortMappings: []mesos.NetworkInfo_PortMapping{{HostPort: 31001, ContainerPort: 80, Protocol: &proto}}}}},
			`{"container_id":{"value":"c1"},"network_infos":[{"name":"net1","ip_addresses":[{"protocol":"IPv4","ip_address":"10.77.0.2"}],"port_mappings":[{"host_port":31001,"container_port":80,"protocol":"tcp"}]}]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(stateContainerStatus(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Fatalf("got  %s\nwant %s", b, c.want)
			}
		})
	}
	st := stateStatuses([]mesos.TaskStatus{{State: mesos.TASK_RUNNING.Enum(), ContainerStatus: cases[2].in}})
	if st[0].ContainerStatus == nil || st[0].ContainerStatus.NetworkInfos[0].IPAddresses[0].IPAddress != ip {
		t.Fatalf("statuses %+v", st)
	}
}
