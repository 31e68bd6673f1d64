package operator

// ContainerStatus is a task status's container_status as /state shows it
// (Mesos's names): the container and, for one on CNI networks, each
// network with the addresses the container got there.
type ContainerStatus struct {
	ContainerID  *ContainerID  `json:"container_id,omitempty"`
	NetworkInfos []NetworkInfo `json:"network_infos,omitempty"`
}

// ContainerID is Mesos's ContainerID.
type ContainerID struct {
	Value string `json:"value"`
}

// NetworkInfo is one network of a container: its name, its addresses and
// the host ports mapped into it.
type NetworkInfo struct {
	Name         string        `json:"name,omitempty"`
	IPAddresses  []IPAddress   `json:"ip_addresses,omitempty"`
	PortMappings []PortMapping `json:"port_mappings,omitempty"`
}

// IPAddress is one address; Protocol is "IPv4" or "IPv6".
type IPAddress struct {
	Protocol  string `json:"protocol,omitempty"`
	IPAddress string `json:"ip_address,omitempty"`
}

// PortMapping is a host port forwarded to a port of the container.
type PortMapping struct {
	HostPort      uint32 `json:"host_port"`
	ContainerPort uint32 `json:"container_port"`
	Protocol      string `json:"protocol,omitempty"`
}
