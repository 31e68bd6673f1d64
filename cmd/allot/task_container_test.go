package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/allot-sched/allot/api/operator"
)

// containerMaster is a master's /state with one agent (at agent, whose
// /api/v1 and /state containerAgent answers) and four tasks: one in an
// image on a CNI network with a GPU, one of a custom executor with an
// image, one on the host, one with a GPU its agent does not report.
type containerMaster struct{ agent string }

// containerAgent records the PRUNE_IMAGES calls it gets (refusing them
// with deny), answers GET_CONTAINERS with t-img's container c-img and
// t-nogpu's c-nogpu, and its /state with GPU 1 (a UUID) assigned to c-img.
type containerAgent struct {
	mu    sync.Mutex
	deny  bool
	calls []string
}

func (m *containerMaster) state() operator.State {
	host := m.agent
	img := func(n string) *operator.Container {
		return &operator.Container{Type: "MESOS", Mesos: &operator.MesosContainer{Image: &operator.Image{Type: "DOCKER", Docker: &operator.DockerImage{Name: n}}}}
	}
	running := func(ips ...string) []operator.TaskStatus {
		st := operator.TaskStatus{State: "TASK_RUNNING", Timestamp: 1_700_000_000}
		if len(ips) > 0 {
			ni := operator.NetworkInfo{Name: "net1"}
			for _, ip := range ips {
				ni.IPAddresses = append(ni.IPAddresses, operator.IPAddress{Protocol: "IPv4", IPAddress: ip})
			}
			st.ContainerStatus = &operator.ContainerStatus{NetworkInfos: []operator.NetworkInfo{ni}}
		}
		return []operator.TaskStatus{st}
	}
	tasks := []operator.Task{
		{ID: "t-img", FrameworkID: "fw", SlaveID: "agent-0001", State: "TASK_RUNNING", Resources: map[string]float64{"cpus": 1, "gpus": 1},
			Container: img("registry.example.com/app:1"), Statuses: running("10.77.0.2")},
		{ID: "t-exec", FrameworkID: "fw", SlaveID: "agent-0001", State: "TASK_RUNNING", Resources: map[string]float64{"cpus": 1},
			ExecutorContainer: img("busybox:1"), Statuses: running()},
		{ID: "t-host", FrameworkID: "fw", SlaveID: "agent-0001", State: "TASK_RUNNING", Resources: map[string]float64{"cpus": 1}, Statuses: running()},
		{ID: "t-nogpu", FrameworkID: "fw", SlaveID: "agent-0001", State: "TASK_RUNNING", Resources: map[string]float64{"gpus": 1}, Statuses: running()},
	}
	agent := operator.Agent{ID: "agent-0001", PID: "slave(1)@" + host, Active: true,
		Resources: map[string]float64{"cpus": 4, "gpus": 2}, Used: map[string]float64{"cpus": 3, "gpus": 1}}
	return operator.State{Slaves: []operator.Agent{agent}, Frameworks: []operator.Framework{{ID: "fw", Tasks: tasks, CompletedTasks: []operator.Task{}}}}
}

func (m *containerMaster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/state" {
		http.NotFound(w, r)
		return
	}
	json.NewEncoder(w).Encode(m.state())
}

func (a *containerAgent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch r.URL.Path {
	case "/state":
		io.WriteString(w, `{"id":"agent-0001","gpus":{"detected":[{"index":0,"uuid":"GPU-aaa"},{"index":1,"uuid":"GPU-bbb"}],"assigned":{"c-img":[1]}}}`)
	case "/api/v1":
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "GET_CONTAINERS") {
			io.WriteString(w, `{"type":"GET_CONTAINERS","get_containers":{"containers":[`+
				`{"framework_id":{"value":"fw"},"executor_id":{"value":"t-img"},"container_id":{"value":"c-img"}},`+
				`{"framework_id":{"value":"fw"},"executor_id":{"value":"t-nogpu"},"container_id":{"value":"c-nogpu"}}]}}`)
			return
		}
		a.calls = append(a.calls, string(b))
		if a.deny {
			http.Error(w, "PRUNE_IMAGES: not authorized: no prune_images ACL matches", http.StatusForbidden)
		}
	default:
		http.NotFound(w, r)
	}
}

func TestTaskContainerAndPruneVerbs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		deny bool
		want []string // in stdout (or, with err, the error)
		not  []string
		err  bool
		call string // the body the agent got
	}{
		{name: "a task in an image on a network with a GPU", args: []string{"task", "t-img"},
			want: []string{"IMAGE      registry.example.com/app:1", "ADDRESSES  net1/10.77.0.2", "GPUS       1 (GPU-bbb)"}},
		{name: "a task whose GPUs its agent does not report", args: []string{"task", "t-nogpu"},
			want: []string{"GPUS       1 (devices not known: container c-nogpu holds no GPU"}},
		{name: "a task of an executor in an image", args: []string{"task", "t-exec"}, want: []string{"IMAGE      busybox:1", "ADDRESSES  -"}, not: []string{"GPUS"}},
		{name: "a task on the host", args: []string{"task", "t-host"}, want: []string{"IMAGE      -", "ADDRESSES  -"}},
		{name: "a task's container in json", args: []string{"task", "t-img", "--json"},
			want: []string{`"container": {`, `"name": "registry.example.com/app:1"`, `"ip_address": "10.77.0.2"`}},
		{name: "agents show GPUs used of total", args: []string{"agents"}, want: []string{"1 / 2"}},
		{name: "prune", args: []string{"prune-images", "0001"}, want: []string{"agent agent-0001: images no live container uses pruned"},
			call: `{"type":"PRUNE_IMAGES","prune_images":{"excluded_images":[]}}`},
		{name: "prune excluding", args: []string{"prune-images", "agent-0001", "--exclude", "busybox:1", "--exclude", "app:2"}, want: []string{"(kept busybox:1, app:2)"},
			call: `{"type":"PRUNE_IMAGES","prune_images":{"excluded_images":[{"type":"DOCKER","docker":{"name":"busybox:1"}},{"type":"DOCKER","docker":{"name":"app:2"}}]}}`},
		{name: "prune refused", args: []string{"prune-images", "0001"}, deny: true, err: true, want: []string{"agent agent-0001 at", "403", "prune_images ACL"}},
		{name: "prune of an unknown agent", args: []string{"prune-images", "nosuch"}, err: true, want: []string{`no agent "nosuch"`}},
		{name: "prune without an agent", args: []string{"prune-images"}, err: true, want: []string{"usage: allot prune-images AGENT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa := &containerAgent{deny: tt.deny}
			agent := httptest.NewServer(fa)
			defer agent.Close()
			out, err := runAgainst(t, &containerMaster{agent: agent.Listener.Addr().String()}, tt.args) // table_test.go
			got := out
			if tt.err {
				if err == nil {
					t.Fatalf("no error; stdout %q", got)
				}
				got = err.Error()
			} else if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("output has %q:\n%s", n, got)
				}
			}
			if tt.call != "" && (len(fa.calls) != 1 || fa.calls[0] != tt.call) {
				t.Errorf("the agent got %q, want %q", fa.calls, tt.call)
			}
		})
	}
}
