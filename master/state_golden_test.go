package master

import (
	"bytes"
	"flag"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/allot-sched/allot/api"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden from what the code produces now")

// fixedListener stands in for the master's listener, which /state names.
type fixedListener struct{ net.Listener }

func (fixedListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5050} }

// /state is a document clients parse field by field (the CLI, the UI,
// scripts): its bytes, field order and omitted fields included, stay as
// the golden file holds them. Ids the master draws at random are replaced
// by their roles before the comparison.
func TestStateJSONGolden(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Reclaim = true })
	h.m.ln = fixedListener{}
	h.m.start = time.Unix(1_700_000_000, 0)
	host := "master-host"
	h.m.info.Hostname = &host
	agentID, agent := h.agent("cpus:4;mem:4096")
	fw := h.framework("golden")
	o := h.offer(fw)
	if err := h.call(fw, launchCall(o, refuse(5), commandTask("t1", agentID, 1, 1024), commandTask("t2", agentID, 1, 512))); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	agent.nextAgentEvent(t, api.AgentEventType_RUN)
	agent.nextAgentEvent(t, api.AgentEventType_RUN)
	if err := h.agentUpdate(agentID, fw.id, "t1", mesos.TASK_RUNNING, "u1"); err != nil {
		t.Fatal(err)
	}
	if err := h.agentUpdate(agentID, fw.id, "t2", mesos.TASK_FINISHED, "u2"); err != nil {
		t.Fatal(err)
	}
	if err := h.call(fw, &scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE, Acknowledge: &scheduler.Call_Acknowledge{
		AgentID: mesos.AgentID{Value: agentID}, TaskID: mesos.TaskID{Value: "t2"}, UUID: []byte("u2")}}); err != nil {
		t.Fatal(err)
	}
	agent.nextAgentEvent(t, api.AgentEventType_ACKNOWLEDGE) // sent once TASK_COMPLETE committed
	waitRegistryTask(t, h, fw.id, "t1")

	rec := httptest.NewRecorder()
	h.m.handleState(rec, httptest.NewRequest(http.MethodGet, "/state", nil))
	got := strings.NewReplacer(h.m.id, "MASTER_ID", agentID, "AGENT_ID", fw.id, "FRAMEWORK_ID").Replace(rec.Body.String())

	path := filepath.Join("testdata", "state.golden.json")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(got), want) {
		t.Errorf("/state changed:\n%s\nwant (%s):\n%s", got, path, want)
	}
}
