package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/imagestore"
	"github.com/allot-sched/allot/agent/nslaunch"
)

// Container images (Mesos's filesystem/linux and docker/runtime isolators
// with the docker image provider): a container whose ContainerInfo is a
// MESOS one with an image runs in that image's root filesystem, pulled and
// kept by agent/imagestore, with the sandbox at /mnt/mesos/sandbox, its
// volumes bound where they ask, and the image's entrypoint, cmd, env and
// working directory applied as Mesos applies them. An agent that cannot
// (no mount namespaces, not root, the isolators not asked for) fails such
// containers naming what is missing, never running them on the host.

// imageProvisioner is the agent's image side: the store, or why there is
// none.
type imageProvisioner struct {
	store   *imagestore.Store
	missing string // why images cannot run here (store is nil)
}

// initImages opens the image store, at Start, when --isolation asks for
// filesystem/linux and docker/runtime (auto does, where the host can). A
// host that cannot make containers leaves images unavailable, saying why;
// a configuration error (an unreadable --docker-config) stops the agent.
func (a *Agent) initImages() error {
	want, err := parseIsolation(a.cfg.Isolation) // New checked it
	if err != nil {
		return err
	}
	var lack []string
	if !want.auto && !want.fsLinux {
		lack = append(lack, "filesystem/linux")
	}
	if !want.auto && !want.dockerRuntime {
		lack = append(lack, "docker/runtime")
	}
	switch {
	case len(lack) > 0:
		a.images.missing = "--isolation lacks " + strings.Join(lack, " and ") + " (the isolators container images need)"
	default:
		a.images.missing = nslaunch.Check()
	}
	if a.images.missing == "" {
		st, err := imagestore.Open(imagestore.Config{Dir: filepath.Join(a.cfg.WorkDir, "store", "docker"), MaxBytes: a.cfg.ImageStoreMaxBytes,
			DockerConfig: a.cfg.DockerConfig, DefaultRegistry: a.cfg.DockerRegistry, Backend: a.cfg.ImageBackend, Log: a.log})
		if err != nil {
			return err
		}
		a.images.store = st
		backend, why := st.Backend()
		a.log.Info().Str("backend", backend).Str("why", backend+": "+why).Msg("container images: root filesystems assembled by " + backend)
		return nil
	}
	if !want.auto {
		a.log.Warn().Str("why", a.images.missing).Msg("container images unavailable; tasks asking for one will fail")
	}
	return nil
}

// imagesState is what /state shows of container images.
func (a *Agent) imagesState() map[string]any {
	if a.images.store == nil {
		return map[string]any{"enabled": false, "reason": a.images.missing}
	}
	backend, why := a.images.store.Backend()
	return map[string]any{"enabled": true, "backend": backend, "backend_reason": why, "store": a.images.store.Stats()}
}

// unsupportedImage says why o asks for an image where allot would not run
// it ("" when it does not): the default executor of a task group runs on
// the host (each of its tasks may name an image of its own,
// container_group.go), and a task of a custom executor runs in its
// executor's container, whatever its own ContainerInfo says. Run on the
// host, such a container would silently go without its image.
func unsupportedImage(o *runOrder) string {
	if o.commandTask {
		return ""
	}
	if o.command && o.exInfo.Container.GetMesos().GetImage() != nil {
		return "Executor's ContainerInfo is not supported by allot: the default executor runs on the host, so it takes no image; give each task of the group its image in its own ContainerInfo"
	}
	for _, t := range o.tasks {
		if t.Container.GetMesos().GetImage() != nil && !o.command {
			return "Task's ContainerInfo is not supported by allot: a task of a custom executor runs in its executor's container; give the image to the ExecutorInfo's ContainerInfo"
		}
	}
	return ""
}

// imageMetrics adds the image store's gauges: its bytes against the cap
// (what --image-store-max-mb bounds), layers, and layers fetched from
// registries since the agent started.
func (a *Agent) imageMetrics(out map[string]float64) {
	if a.images.store == nil {
		return
	}
	st := a.images.store.Stats()
	out["slave/image_store_bytes"], out["slave/image_store_max_bytes"] = float64(st.Bytes), float64(st.MaxBytes)
	out["slave/image_store_layers"], out["slave/image_layer_pulls"] = float64(st.Layers), float64(st.LayerPulls)
}

// imageSpec fills the image part of ex's container Spec: the rootfs, the
// sandbox and volumes bound into it, and the program as the image and the
// CommandInfo make it.
func (a *Agent) imageSpec(ex *executor, s *nslaunch.Spec) error {
	img := ex.container.GetMesos().GetImage()
	if img == nil {
		return nil
	}
	ref := img.GetDocker().GetName()
	if img.GetType() != mesos.Image_DOCKER || ref == "" {
		return fmt.Errorf("container image of type %s is not supported: only DOCKER images (with docker.name) are", img.GetType())
	}
	if a.images.store == nil {
		return fmt.Errorf("cannot run image %q on this agent: %s", ref, orDefault(a.images.missing, "the agent has not started"))
	}
	// A pull ends with the agent.
	ctx, cancel := a.stopContext()
	defer cancel()
	pulled, err := a.images.store.Get(ctx, ref, img.GetCached())
	if err != nil {
		return err
	}
	argv, err := dockerArgv(ex.containerCommand, pulled.Config)
	if err != nil {
		return fmt.Errorf("image %q: %w", ref, err)
	}
	mounts, err := a.volumeMounts(ex)
	if err != nil {
		return err
	}
	rootfs, err := a.images.store.Provision(pulled, a.containerDir(ex.containerID))
	if err != nil {
		return err
	}
	a.recordLayerBase(ex.containerID, rootfs) // container_disk.go
	s.Rootfs, s.Argv = rootfs, argv
	s.Mounts = append(append(s.Mounts, nslaunch.Mount{Source: ex.sandbox, Target: nslaunch.SandboxPath}), mounts...)
	s.Env = append(s.Env, pulled.Config.Env...)
	s.Dir = nslaunch.SandboxPath
	if pulled.Config.WorkingDir != "" {
		s.Dir = pulled.Config.WorkingDir
	}
	return nil
}

// releaseImage frees container cid's rootfs and its hold on the store's
// layers.
func (a *Agent) releaseImage(cid string) {
	if a.images.store == nil {
		return
	}
	if err := a.images.store.Release(a.containerDir(cid)); err != nil {
		a.log.Warn().Err(err).Str("container_id", cid).Msg("releasing the container's rootfs")
	}
}

// adoptImage keeps the layers of a container recovered after a restart.
func (a *Agent) adoptImage(cid string) {
	if a.images.store != nil {
		a.images.store.Adopt(a.containerDir(cid))
	}
}

// dockerArgv is the program a container in an image runs, by Mesos's
// docker/runtime rules: a shell command is "/bin/sh -c value"; a value
// runs with arguments[1:], ignoring the image's Entrypoint and Cmd; with
// no value, the Entrypoint runs with the arguments (all of them) after it,
// or with Cmd when there are none; without an Entrypoint, Cmd[0] runs
// with the arguments, or with the rest of Cmd; an image with neither needs
// a value.
func dockerArgv(ci *mesos.CommandInfo, rt imagestore.Runtime) ([]string, error) {
	switch {
	case ci.GetShell():
		if ci.GetValue() == "" {
			return nil, errors.New("a shell command (shell=true, the default) needs a value; set shell=false to run the image's entrypoint")
		}
		return []string{"/bin/sh", "-c", ci.GetValue()}, nil
	case ci.GetValue() != "":
		return commandArgv(ci), nil
	case len(rt.Entrypoint) > 0:
		if len(ci.GetArguments()) > 0 {
			return append(append([]string(nil), rt.Entrypoint...), ci.GetArguments()...), nil
		}
		return append(append([]string(nil), rt.Entrypoint...), rt.Cmd...), nil
	case len(rt.Cmd) > 0 && len(ci.GetArguments()) > 0:
		return append([]string{rt.Cmd[0]}, ci.GetArguments()...), nil
	case len(rt.Cmd) > 0:
		return append([]string(nil), rt.Cmd...), nil
	}
	return nil, errors.New("the image has neither Entrypoint nor Cmd, so the CommandInfo must name the program (value)")
}

// volumeMounts are the binds of ex's container.volumes (host paths, and
// sandbox paths of its own) and of the persistent volumes its resources
// use, at their container paths: an absolute one in the image, a relative
// one under the sandbox.
func (a *Agent) volumeMounts(ex *executor) ([]nslaunch.Mount, error) {
	target := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(nslaunch.SandboxPath, p)
	}
	var out []nslaunch.Mount
	for _, v := range ex.container.GetVolumes() {
		src, err := volumeSource(ex, &v)
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("volume at %s: host path: %w", v.ContainerPath, err)
		}
		out = append(out, nslaunch.Mount{Source: src, Target: target(v.ContainerPath), ReadOnly: v.GetMode() == mesos.RO})
	}
	a.mu.Lock()
	res := volumesOfLocked(ex)
	a.mu.Unlock()
	for i := range res {
		r := &res[i]
		if !r.IsPersistentVolume() {
			continue
		}
		dir := volumeDir(a, r)
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("persistent volume %q of role %q is not on this agent: %v", r.Disk.Persistence.ID, r.ReservationRole(), err)
		}
		vol := r.Disk.GetVolume()
		out = append(out, nslaunch.Mount{Source: dir, Target: target(vol.GetContainerPath()), ReadOnly: vol.GetMode() == mesos.RO})
	}
	return out, nil
}

// volumeSource is the host path a container volume binds: host_path (or
// source HOST_PATH), absolute or relative to the sandbox, or a sandbox
// path of the container's own (SANDBOX_PATH, SELF). Other sources (images,
// Docker volumes, secrets, a parent's sandbox) are refused by name.
func volumeSource(ex *executor, v *mesos.Volume) (string, error) {
	hp := v.GetHostPath()
	if src := v.GetSource(); src != nil {
		switch {
		case src.GetType() == mesos.Volume_Source_HOST_PATH && src.HostPath != nil:
			hp = src.HostPath.Path
		case src.GetType() == mesos.Volume_Source_SANDBOX_PATH && src.SandboxPath.GetType() == mesos.Volume_Source_SandboxPath_SELF:
			hp = src.SandboxPath.GetPath()
			if filepath.IsAbs(hp) {
				return "", fmt.Errorf("volume at %s: a sandbox path must be relative", v.ContainerPath)
			}
		default:
			return "", fmt.Errorf("volume at %s: source %s is not supported (host paths and the container's own sandbox paths are)", v.ContainerPath, src.GetType())
		}
	} else if v.Image != nil {
		return "", fmt.Errorf("volume at %s: image volumes are not supported", v.ContainerPath)
	}
	if hp == "" {
		return "", fmt.Errorf("volume at %s names no host path", v.ContainerPath)
	}
	if filepath.IsAbs(hp) {
		return filepath.Clean(hp), nil
	}
	p := filepath.Join(ex.sandbox, hp)
	if rel, err := filepath.Rel(ex.sandbox, p); err != nil || strings.HasPrefix(rel, "..") {
		return "", fmt.Errorf("volume at %s: %q leaves the sandbox", v.ContainerPath, hp)
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		return "", err
	}
	return p, nil
}
