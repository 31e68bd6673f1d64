package master

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/operator"
)

// stateContainerStatus is cs as /state writes a status's
// container_status (nil when the agent sent none: a task on the host's
// network).
func stateContainerStatus(cs *mesos.ContainerStatus) *operator.ContainerStatus {
	if cs == nil || (cs.ContainerID == nil && len(cs.NetworkInfos) == 0) {
		return nil
	}
	out := &operator.ContainerStatus{}
	if cs.ContainerID != nil {
		out.ContainerID = &operator.ContainerID{Value: cs.ContainerID.Value}
	}
	for _, ni := range cs.NetworkInfos {
		n := operator.NetworkInfo{Name: ni.GetName()}
		for _, ip := range ni.IPAddresses {
			a := operator.IPAddress{IPAddress: ip.GetIPAddress()}
			if ip.Protocol != nil {
				a.Protocol = ip.Protocol.String()
			}
			n.IPAddresses = append(n.IPAddresses, a)
		}
		for _, pm := range ni.PortMappings {
			n.PortMappings = append(n.PortMappings, operator.PortMapping{HostPort: pm.HostPort, ContainerPort: pm.ContainerPort, Protocol: pm.GetProtocol()})
		}
		out.NetworkInfos = append(out.NetworkInfos, n)
	}
	return out
}
