package agent

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// A master that answers REGISTER 410 (the agent was removed) makes the
// agent kill its executors, forget them, their checkpoints and its id, so
// that its next REGISTER carries no id.
func TestRemovedAgentStartsAfresh(t *testing.T) {
	var (
		mu  sync.Mutex
		ids []string
	)
	master := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var call api.AgentCall
		proto.Unmarshal(b, &call)
		mu.Lock()
		ids = append(ids, call.AgentId)
		mu.Unlock()
		http.Error(w, "agent "+call.AgentId+" was removed", http.StatusGone)
	}))
	defer master.Close()
	addr := strings.TrimPrefix(master.URL, "http://")
	work := t.TempDir()
	if err := writeFileAtomic(filepath.Join(work, "meta", "agent_id"), []byte("old")); err != nil {
		t.Fatal(err)
	}
	a, err := New(Config{Masters: []string{addr}, WorkDir: work, Resources: "cpus:1;mem:128;disk:100",
		Isolation: "posix/cpu,posix/mem", Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { sleeper.Wait(); close(exited) }()
	t.Cleanup(func() { sleeper.Process.Kill(); <-exited })
	ex := &executor{fw: "fw", id: "ex", checkpoint: true, pid: sleeper.Process.Pid, containerID: "c", tasks: map[string]*agentTask{}}
	a.mu.Lock()
	a.executors[exKey("fw", "ex")] = ex
	a.checkpointLocked(ex)
	a.mu.Unlock()
	if _, err := os.Stat(a.checkpointPath(ex)); err != nil {
		t.Fatalf("no checkpoint to forget: %v", err)
	}

	err = a.registerAndServe(addr)
	if err == nil || !strings.Contains(err.Error(), "registering afresh") {
		t.Fatalf("REGISTER answered 410: error %v, want the agent to register afresh", err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the executor's process was not killed")
	}
	if a.ID() != "" || len(a.executors) != 0 {
		t.Errorf("after removal: id %q, %d executors; want none", a.ID(), len(a.executors))
	}
	for _, p := range []string{filepath.Join(work, "meta", "agent_id"), a.checkpointPath(ex)} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s survives the removal (%v)", p, err)
		}
	}
	a.registerAndServe(addr)
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 2 || ids[0] != "old" || ids[1] != "" {
		t.Errorf("REGISTERs carried agent ids %q, want old, then none", ids)
	}
}
