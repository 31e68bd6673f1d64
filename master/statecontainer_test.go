package master

import (
	"encoding/json"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/resources"
)

// A task's /state entry carries its ContainerInfo in Mesos's names (type,
// mesos.image, network_infos, volumes) and its custom executor's, never
// an image's credential; a task without one writes neither.
func TestStateTaskContainers(t *testing.T) {
	mt, net, host, ro := mesos.ContainerInfo_MESOS, "net1", "/srv/data", mesos.RO
	secret := "s3cret"
	image := func(name string) *mesos.ContainerInfo {
		return &mesos.ContainerInfo{Type: &mt, Mesos: &mesos.ContainerInfo_MesosInfo{Image: &mesos.Image{Type: mesos.Image_DOCKER.Enum(),
			Docker: &mesos.Image_Docker{Name: name, Credential: &mesos.Credential{Principal: "p", Secret: &secret}}}}}
	}
	withNet := image("registry.example.com/app:1")
	withNet.NetworkInfos = []mesos.NetworkInfo{{Name: &net, PortMappings: []mesos.NetworkInfo_PortMapping{{HostPort: 31001, ContainerPort: 80}}}}
	withNet.Volumes = []mesos.Volume{{ContainerPath: "/data", HostPath: &host, Mode: &ro}}
	cases := []struct {
		name string
		info mesos.TaskInfo
		want []string // substrings of the task's JSON
		not  []string
	}{
		{"host", mesos.TaskInfo{Name: "plain"}, nil, []string{`"container"`, `"executor_container"`}},
		{"command task in an image", mesos.TaskInfo{Name: "img", Container: withNet}, []string{
			`"container":{"type":"MESOS","mesos":{"image":{"type":"DOCKER","docker":{"name":"registry.example.com/app:1"}}},` +
				`"network_infos":[{"name":"net1","port_mappings":[{"host_port":31001,"container_port":80}]}],` +
				`"volumes":[{"container_path":"/data","host_path":"/srv/data","mode":"RO"}]}`}, []string{secret, `"executor_container"`}},
		{"custom executor's image", mesos.TaskInfo{Name: "ex", Executor: &mesos.ExecutorInfo{Container: image("busybox:1")}},
			[]string{`"executor_container":{"type":"MESOS","mesos":{"image":{"type":"DOCKER","docker":{"name":"busybox:1"}}}}`}, []string{secret, `"container":`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := stateTaskOf(&task{id: "t1", fw: "f", agent: "a", info: c.info, res: resources.Resources{}, state: mesos.TASK_RUNNING})
			b, err := json.Marshal(st)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("task JSON lacks %s\n%s", w, b)
				}
			}
			for _, n := range c.not {
				if strings.Contains(string(b), n) {
					t.Errorf("task JSON has %s\n%s", n, b)
				}
			}
		})
	}
}
