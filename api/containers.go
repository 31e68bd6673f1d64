package api

import mesos "github.com/mesos/mesos-go/api/v1/lib"

// UnsupportedContainer says what of container c allot cannot provide yet,
// or "" when nothing: allot runs every task in a sandbox on the agent's
// host (posix or cgroups isolation) and has no container images. A task
// asking for one must fail rather than run on the host as if it had not
// asked. Container networks (network_infos) are the agent's to check: it
// knows its CNI networks. whose is "Task" or "Executor", as the
// message names it.
func UnsupportedContainer(whose string, c *mesos.ContainerInfo) string {
	if c == nil {
		return ""
	}
	prefix := whose + "'s ContainerInfo is not supported by allot yet: "
	switch {
	case c.Docker != nil || (c.Type != nil && *c.Type == mesos.ContainerInfo_DOCKER):
		return prefix + "the DOCKER containerizer (container images) is not implemented"
	case c.Mesos.GetImage() != nil:
		return prefix + "a MESOS container with an image (container images) is not implemented"
	}
	return ""
}
