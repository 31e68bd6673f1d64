package agent

import (
	"context"
	"path/filepath"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/cni"
)

// CNI networks (Mesos's network/cni isolator, package cni): a container
// whose ContainerInfo names networks in network_infos gets a network
// namespace of its own, attached to them before it starts, detached when
// it is destroyed, and its addresses go in every status update of its
// tasks (container_status.network_infos). A container that names none
// stays on the host's network, as before.

// cniTimeout bounds one container's ADDs or DELs: a plugin that hangs
// must not hold a launch or a destroy for ever.
const cniTimeout = 2 * time.Minute

func newCNI(cfg Config) (*cni.Manager, error) {
	m, err := cni.New(cni.Config{ConfigDir: cfg.NetworkCNIConfigDir, PluginsDir: cfg.NetworkCNIPluginsDir,
		StateDir: filepath.Join(cfg.WorkDir, "cni"), Log: cfg.Log})
	if err != nil {
		return nil, err
	}
	if m.Enabled() {
		cfg.Log.Info().Strs("networks", m.Networks()).Str("config_dir", cfg.NetworkCNIConfigDir).
			Str("plugins_dir", cfg.NetworkCNIPluginsDir).Msg("CNI networks")
	}
	return m, nil
}

// containerNetworkInfos are the NetworkInfos ex's container asks for: its
// ExecutorInfo's, or for the command executor of one command task, the
// task's (Mesos gives that executor the task's ContainerInfo).
func containerNetworkInfos(ex *executor) []mesos.NetworkInfo {
	if c := ex.info.Container; c != nil && len(c.NetworkInfos) > 0 {
		return c.NetworkInfos
	}
	if ex.commandTask {
		for _, t := range ex.tasks {
			if c := t.info.Container; c != nil {
				return c.NetworkInfos
			}
		}
	}
	return nil
}

// attachNetworks puts ex's container on the networks it names and
// returns the namespace to run it in, "" for the host's network.
func (a *Agent) attachNetworks(ex *executor) (string, error) {
	a.mu.Lock()
	infos := containerNetworkInfos(ex)
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), cniTimeout)
	defer cancel()
	at, err := a.cni.Attach(ctx, ex.containerID, infos)
	if err != nil || at == nil {
		return "", err
	}
	return at.NetNS, nil
}

// releaseNetworks takes container cid off its networks, if it was on any.
func (a *Agent) releaseNetworks(cid string) {
	ctx, cancel := context.WithTimeout(context.Background(), cniTimeout)
	defer cancel()
	if err := a.cni.Detach(ctx, cid); err != nil {
		a.log.Warn().Err(err).Str("container_id", cid).Msg("CNI: detaching the container (tried again when the agent restarts)")
	}
}

// recoverNetworks keeps the networks of the executors recovered alive and
// detaches every other container's (plugins run: not under a.mu).
func (a *Agent) recoverNetworks() {
	live := map[string]bool{}
	a.mu.Lock()
	for _, ex := range a.executors {
		if ex.pid > 0 && !ex.exited {
			live[ex.containerID] = true
		}
	}
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), cniTimeout)
	defer cancel()
	if err := a.cni.Recover(ctx, func(cid string) bool { return live[cid] }); err != nil {
		a.log.Warn().Err(err).Msg("CNI: recovering containers' networks")
	}
}

// stampContainerStatusLocked gives st, an update of one of ex's tasks, its
// container's id and addresses when the container is on CNI networks, as
// Mesos's agent fills container_status.network_infos. Caller holds a.mu.
func (a *Agent) stampContainerStatusLocked(ex *executor, st *mesos.TaskStatus) {
	infos := a.cni.Status(ex.containerID)
	if len(infos) == 0 {
		return
	}
	if st.ContainerStatus == nil {
		st.ContainerStatus = &mesos.ContainerStatus{}
	}
	st.ContainerStatus.ContainerID = &mesos.ContainerID{Value: ex.containerID}
	st.ContainerStatus.NetworkInfos = infos
}
