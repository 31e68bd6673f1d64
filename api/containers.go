package api

import mesos "github.com/mesos/mesos-go/api/v1/lib"

// UnsupportedContainer says what of container c allot cannot provide,
// or "" when nothing: allot runs images in MESOS containers (the agent's
// filesystem/linux and docker/runtime isolation), but has no Docker
// daemon behind a DOCKER containerizer. A task asking for one must fail
// rather than run on the host as if it had not asked. Container networks
// (network_infos) are the agent's to check: it knows its CNI networks.
// whose is "Task" or "Executor", as the message names it.
func UnsupportedContainer(whose string, c *mesos.ContainerInfo) string {
	if c != nil && (c.Docker != nil || (c.Type != nil && *c.Type == mesos.ContainerInfo_DOCKER)) {
		return whose + "'s ContainerInfo is not supported by allot: the DOCKER containerizer needs a Docker daemon and no Docker daemon is configured (run the image in a MESOS container with mesos.image instead)"
	}
	return ""
}
