package operator

// Container is a ContainerInfo as /state shows it, in Mesos's names: the
// fields an operator reads (its type, image, networks and volumes), never
// an image's credentials.
type Container struct {
	Type         string          `json:"type"`
	Mesos        *MesosContainer `json:"mesos,omitempty"`
	NetworkInfos []NetworkInfo   `json:"network_infos,omitempty"`
	Volumes      []Volume        `json:"volumes,omitempty"`
}

// MesosContainer is ContainerInfo.mesos: the image a MESOS container
// runs in.
type MesosContainer struct {
	Image *Image `json:"image,omitempty"`
}

// Image is Mesos's Image: its type (DOCKER or APPC), its name and
// whether a cached copy may serve it.
type Image struct {
	Type   string       `json:"type"`
	Docker *DockerImage `json:"docker,omitempty"`
	Appc   *AppcImage   `json:"appc,omitempty"`
	Cached *bool        `json:"cached,omitempty"`
}

// DockerImage is Image.docker without its credential.
type DockerImage struct {
	Name string `json:"name"`
}

// AppcImage is Image.appc's name.
type AppcImage struct {
	Name string `json:"name"`
}

// Volume is one of a container's volumes: where it appears inside, its
// host path (when it has one) and its mode.
type Volume struct {
	ContainerPath string `json:"container_path"`
	HostPath      string `json:"host_path,omitempty"`
	Mode          string `json:"mode,omitempty"`
}

// ImageName is the name of the image c runs in, "" for none.
func (c *Container) ImageName() string {
	if c == nil || c.Mesos == nil || c.Mesos.Image == nil {
		return ""
	}
	switch img := c.Mesos.Image; {
	case img.Docker != nil:
		return img.Docker.Name
	case img.Appc != nil:
		return img.Appc.Name
	}
	return ""
}

// Image is the image t runs in: its own container's, else its executor's
// ("" for none).
func (t *Task) Image() string {
	if n := t.Container.ImageName(); n != "" {
		return n
	}
	return t.ExecutorContainer.ImageName()
}

// Addresses are the IP addresses t's container got on its networks, as
// its latest status that reports any says ("network/ip" each); none for a
// task on the host's network.
func (t *Task) Addresses() []string {
	for i := len(t.Statuses) - 1; i >= 0; i-- {
		cs := t.Statuses[i].ContainerStatus
		if cs == nil || len(cs.NetworkInfos) == 0 {
			continue
		}
		var out []string
		for _, ni := range cs.NetworkInfos {
			for _, ip := range ni.IPAddresses {
				if ni.Name != "" {
					out = append(out, ni.Name+"/"+ip.IPAddress)
				} else {
					out = append(out, ip.IPAddress)
				}
			}
		}
		return out
	}
	return nil
}
