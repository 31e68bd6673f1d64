package agent

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/api"
)

// A RUN whose task or executor asks for a container allot cannot provide
// fails each task TASK_FAILED (REASON_CONTAINER_LAUNCH_FAILED) naming what
// is not supported, and starts no executor; a plain MESOS container runs.
func TestRunRefusesUnsupportedContainers(t *testing.T) {
	docker, mesosType := mesos.ContainerInfo_DOCKER, mesos.ContainerInfo_MESOS
	tests := []struct {
		name      string
		task, exc *mesos.ContainerInfo
		want      string // "" runs
	}{
		{"docker", &mesos.ContainerInfo{Type: &docker}, nil, "no Docker daemon is configured"},
		{"mesos image", &mesos.ContainerInfo{Type: &mesosType, Mesos: &mesos.ContainerInfo_MesosInfo{Image: &mesos.Image{Type: mesos.Image_DOCKER.Enum()}}}, nil, ""},
		{"network", &mesos.ContainerInfo{Type: &mesosType, NetworkInfos: []mesos.NetworkInfo{{Name: strPtr("n1")}}}, nil, ""},
		{"executor's docker", nil, &mesos.ContainerInfo{Type: &docker}, "Executor's ContainerInfo"},
		{"plain mesos", &mesos.ContainerInfo{Type: &mesosType}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &Agent{cfg: Config{Clock: newManualClock(), WorkDir: t.TempDir(), ExecutorCommand: []string{"/bin/false"}}, log: zerolog.Nop(),
				executors: map[string]*executor{}, frameworks: map[string]*mesos.FrameworkInfo{}, sendq: make(chan *api.AgentCall, 16),
				connected: true, iso: &posixIsolator{}}
			ti := mesos.TaskInfo{TaskID: mesos.TaskID{Value: "t"}, Container: tc.task}
			if tc.exc != nil {
				ti.Executor = &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "x"}, Container: tc.exc}
			} else {
				ti.Command = &mesos.CommandInfo{Value: strPtr("true")}
			}
			fwB, _ := (&mesos.FrameworkInfo{User: "u", Name: "n"}).Marshal()
			tB, _ := ti.Marshal()
			ev := &api.AgentEvent{Type: api.AgentEventType_RUN, FrameworkId: "fw", FrameworkInfo: fwB, Task: tB}
			if tc.want == "" {
				a.mu.Lock()
				refused := a.refuseUnsupportedLocked("fw/t", &runOrder{command: true, commandTask: true, tasks: []mesos.TaskInfo{ti}})
				a.mu.Unlock()
				if refused {
					t.Fatal("a plain MESOS container was refused")
				}
				return
			}
			a.run(ev)
			if len(a.sendq) != 1 {
				t.Fatalf("%d calls sent, want one update", len(a.sendq))
			}
			var st mesos.TaskStatus
			if err := st.Unmarshal((<-a.sendq).Status); err != nil {
				t.Fatal(err)
			}
			if st.GetState() != mesos.TASK_FAILED || st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || !strings.Contains(st.GetMessage(), tc.want) {
				t.Errorf("update %v %v %q, want TASK_FAILED REASON_CONTAINER_LAUNCH_FAILED with %q", st.GetState(), st.GetReason(), st.GetMessage(), tc.want)
			}
			for _, ex := range a.executors {
				if !ex.exited || ex.launching {
					t.Errorf("executor %s was started", ex.id)
				}
			}
		})
	}
}
