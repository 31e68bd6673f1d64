package main

import (
	"flag"

	"github.com/allot-sched/allot/agent"
)

// imageFlags are allot agent's flags for container images (docs/containers.md).
type imageFlags struct {
	dockerConfig, registry, backend string
	storeMaxMB                      int64
}

func addImageFlags(fs *flag.FlagSet) *imageFlags {
	f := &imageFlags{}
	fs.StringVar(&f.dockerConfig, "docker-config", "", "registry credentials for container images: a docker config `file` (what docker login writes; its \"auths\") or that JSON itself (Mesos's --docker_config); empty: pull anonymously")
	fs.StringVar(&f.registry, "docker-registry", "", "`registry` (host[:port]) for image names that name none, e.g. a mirror; empty: Docker Hub")
	fs.Int64Var(&f.storeMaxMB, "image-store-max-mb", 20480, "cap in `MB` on the extracted image layers kept under <work-dir>/store/docker; after each pull, layers no container uses are removed, least recently used first (0: no cap)")
	fs.StringVar(&f.backend, "image-provisioner-backend", "", "how a container's root filesystem is assembled from its image's layers: overlay or copy; empty: overlay where the kernel allows it, else copy (the agent logs which and why, /state shows it)")
	return f
}

// apply puts the flags into cfg.
func (f *imageFlags) apply(cfg *agent.Config) {
	cfg.DockerConfig, cfg.DockerRegistry, cfg.ImageBackend = f.dockerConfig, f.registry, f.backend
	cfg.ImageStoreMaxBytes = f.storeMaxMB << 20
}
