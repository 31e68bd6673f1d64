package master

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/operator"
)

// stateTaskContainers are the containers /state shows for a task: its own
// ContainerInfo (Mesos's task.container) and, allot's addition, its custom
// executor's, where a task of that executor runs (Mesos lists it under the
// framework's executors, which allot's /state does not).
func stateTaskContainers(info *mesos.TaskInfo) (own, executor *operator.Container) {
	own = stateContainer(info.Container)
	if info.Executor != nil {
		executor = stateContainer(info.Executor.Container)
	}
	return own, executor
}

// stateContainer is ci as /state writes it (nil for none): the fields an
// operator reads, never an image's credentials.
func stateContainer(ci *mesos.ContainerInfo) *operator.Container {
	if ci == nil {
		return nil
	}
	out := &operator.Container{Type: ci.GetType().String()}
	if img := ci.GetMesos().GetImage(); img != nil {
		oi := &operator.Image{Type: img.GetType().String(), Cached: img.Cached}
		if d := img.Docker; d != nil {
			oi.Docker = &operator.DockerImage{Name: d.Name}
		}
		if a := img.Appc; a != nil {
			oi.Appc = &operator.AppcImage{Name: a.Name}
		}
		out.Mesos = &operator.MesosContainer{Image: oi}
	}
	for _, ni := range ci.NetworkInfos {
		n := operator.NetworkInfo{Name: ni.GetName()}
		for _, pm := range ni.PortMappings {
			n.PortMappings = append(n.PortMappings, operator.PortMapping{HostPort: pm.HostPort, ContainerPort: pm.ContainerPort, Protocol: pm.GetProtocol()})
		}
		out.NetworkInfos = append(out.NetworkInfos, n)
	}
	for _, v := range ci.Volumes {
		ov := operator.Volume{ContainerPath: v.ContainerPath, HostPath: v.GetHostPath()}
		if v.Mode != nil {
			ov.Mode = v.Mode.String()
		}
		out.Volumes = append(out.Volumes, ov)
	}
	return out
}
