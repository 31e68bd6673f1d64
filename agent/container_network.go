package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/allot-sched/allot/agent/cni"
	"github.com/allot-sched/allot/agent/nslaunch"
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

// noNetworks stands for the CNI manager of an agent built without New
// (tests): no networks, so every container stays on the host's network.
var noNetworks, _ = cni.New(cni.Config{})

func (a *Agent) networks() *cni.Manager {
	if a.cni == nil {
		return noNetworks
	}
	return a.cni
}

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

// networkSpec fills the network part of ex's container Spec: when its
// ContainerInfo names CNI networks, the container is attached to them
// (before anything of it runs) and joins their namespace, with a UTS
// namespace named by ContainerInfo.hostname or else its container id, and
// /etc/hostname, /etc/hosts and /etc/resolv.conf of its own (the host's
// when the networks gave no name servers), as Mesos sets them up. A failure (an
// unknown network, a plugin's error) fails the launch naming it.
func (a *Agent) networkSpec(ex *executor, s *nslaunch.Spec) error {
	infos := ex.container.GetNetworkInfos()
	if len(cni.NamedNetworks(infos)) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), cniTimeout)
	defer cancel()
	at, err := a.networks().Attach(ctx, ex.containerID, infos)
	if err != nil {
		return fmt.Errorf("network/cni: %w", err)
	}
	hostname := ex.container.GetHostname()
	if hostname == "" {
		hostname = ex.containerID
	}
	files, err := a.networks().EtcFiles(ex.containerID, hostname)
	if err != nil {
		return fmt.Errorf("network/cni: %w", err)
	}
	s.NetNS, s.Hostname = at.NetNS, hostname
	for _, f := range files {
		if s.Rootfs == "" && (f.Source == f.Target || !fileExists(f.Target)) {
			continue // the host's own, or a file binding would make on the host
		}
		s.Mounts = append(s.Mounts, nslaunch.Mount{Source: f.Source, Target: f.Target, ReadOnly: true})
	}
	// As Mesos: a libprocess program binds the container's address, not
	// the agent's it would inherit.
	s.Env = append(s.Env, "LIBPROCESS_IP=0.0.0.0")
	return nil
}

// releaseNetwork takes container cid off its networks, if it was on any.
func (a *Agent) releaseNetwork(cid string) {
	ctx, cancel := context.WithTimeout(context.Background(), cniTimeout)
	defer cancel()
	if err := a.networks().Detach(ctx, cid); err != nil {
		a.log.Warn().Err(err).Str("container_id", cid).Msg("CNI: detaching the container (tried again when the agent restarts)")
	}
}

// networkRefusal says why o cannot have the networks it names here, or
// "": the tasks of a group share their executor's network (named on
// ExecutorInfo.container, as Mesos has a pod's), so networks on one of
// them would be ignored; allot refuses them rather than run the task on
// another network than it asked for.
func networkRefusal(o *runOrder) string {
	if !o.command || o.commandTask {
		return ""
	}
	for _, t := range o.tasks {
		if len(cni.NamedNetworks(t.Container.GetNetworkInfos())) > 0 {
			return "Task's ContainerInfo is not supported by allot: the tasks of a group share their executor's network; name the networks in the ExecutorInfo's ContainerInfo"
		}
	}
	return ""
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
	if err := a.networks().Recover(ctx, func(cid string) bool { return live[cid] }); err != nil {
		a.log.Warn().Err(err).Msg("CNI: recovering containers' networks")
	}
}

// cniState is what the agent's /state shows of CNI: whether it is on, the
// directories, the networks known and how many containers are on them.
func (a *Agent) cniState() map[string]any {
	m := a.networks()
	st := m.Stats()
	return map[string]any{"enabled": m.Enabled(), "config_dir": a.cfg.NetworkCNIConfigDir, "plugins_dir": a.cfg.NetworkCNIPluginsDir,
		"networks": m.Networks(), "containers": st.Attached}
}

// cniCollector exposes CNI's counts on the agent's /metrics.
type cniCollector struct{ a *Agent }

var (
	cniNetworksDesc     = prometheus.NewDesc("allot_agent_cni_networks", "CNI networks this agent knows (--network-cni-config-dir).", nil, nil)
	cniContainersDesc   = prometheus.NewDesc("allot_agent_cni_containers", "Containers on CNI networks now.", nil, nil)
	cniAttachErrorsDesc = prometheus.NewDesc("allot_agent_cni_attach_errors_total", "Containers whose CNI attach failed (their tasks failed to launch).", nil, nil)
	cniDetachErrorsDesc = prometheus.NewDesc("allot_agent_cni_detach_errors_total", "CNI detaches that failed (kept, tried again when the agent restarts).", nil, nil)
)

func (cniCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cniNetworksDesc, cniContainersDesc, cniAttachErrorsDesc, cniDetachErrorsDesc} {
		ch <- d
	}
}

func (c cniCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.a.networks().Stats()
	ch <- prometheus.MustNewConstMetric(cniNetworksDesc, prometheus.GaugeValue, float64(st.Networks))
	ch <- prometheus.MustNewConstMetric(cniContainersDesc, prometheus.GaugeValue, float64(st.Attached))
	ch <- prometheus.MustNewConstMetric(cniAttachErrorsDesc, prometheus.CounterValue, float64(st.AttachErrors))
	ch <- prometheus.MustNewConstMetric(cniDetachErrorsDesc, prometheus.CounterValue, float64(st.DetachErrors))
}

// stampContainerStatusLocked gives st, an update of one of ex's tasks, its
// container's id and addresses when the container is on CNI networks, as
// Mesos's agent fills container_status.network_infos. Caller holds a.mu.
func (a *Agent) stampContainerStatusLocked(ex *executor, st *mesos.TaskStatus) {
	infos := a.networks().Status(ex.containerID)
	if len(infos) == 0 {
		return
	}
	if st.ContainerStatus == nil {
		st.ContainerStatus = &mesos.ContainerStatus{}
	}
	st.ContainerStatus.ContainerID = &mesos.ContainerID{Value: ex.containerID}
	st.ContainerStatus.NetworkInfos = infos
}
