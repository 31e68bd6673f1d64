package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	magent "github.com/mesos/mesos-go/api/v1/lib/agent"
	acalls "github.com/mesos/mesos-go/api/v1/lib/agent/calls"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpagent"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpmaster"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
	mcalls "github.com/mesos/mesos-go/api/v1/lib/master/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// The agent's operator API, the master's LIST_FILES and READ_FILE, the
// Mesos-named metrics, and SET_LOGGING_LEVEL on real processes, through
// mesos-go's own clients: a master started at --log-level info logs a
// rejected scheduler call (a debug line) only while SET_LOGGING_LEVEL has
// made it one step more verbose, and stops once the level reverts.
func TestMesosAgentAPIAndLoggingLevel(t *testing.T) {
	c := newCluster(t, 1, "--log-level", "info")
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "agentapi"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("api-1", o, "echo hello agent api", 0.1, 32))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "api-1", mesos.TASK_FINISHED)
	sandbox := "/frameworks/" + fw.ID() + "/executors/api-1/runs/latest"

	agentCli := httpagent.NewSender(httpcli.New(httpcli.Endpoint("http://"+c.Agents[0].Addr+"/api/v1"),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf])).Send)
	var st magent.Response
	agentSend(t, agentCli, acalls.GetAgent(), &st)
	if st.GetGetAgent().GetAgentInfo().GetID().Value != o.AgentID.Value {
		t.Errorf("agent GET_AGENT: %+v, want agent %s", st.GetGetAgent(), o.AgentID.Value)
	}
	var rf magent.Response
	agentSend(t, agentCli, acalls.ReadFile(sandbox+"/stdout", 0), &rf)
	if !strings.Contains(string(rf.GetReadFile().Data), "hello agent api") {
		t.Errorf("agent READ_FILE: %q", rf.GetReadFile().Data)
	}

	masterCli := httpmaster.NewSender(httpcli.New(httpcli.Endpoint("http://"+c.MasterAddr+"/api/v1"),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeJSON])).Send)
	get := operatorGetter(t, masterCli)
	read := get(mcalls.ReadFile("/slaves/"+o.AgentID.Value+sandbox+"/stdout", 0))
	if !strings.Contains(string(read.GetReadFile().Data), "hello agent api") {
		t.Errorf("master READ_FILE: %q", read.GetReadFile().Data)
	}
	var snap map[string]float64
	getJSONFrom(t, "http://"+c.MasterAddr+"/metrics/snapshot", &snap)
	if snap["master/elected"] != 1 || snap["master/slaves_active"] != 1 || snap["master/cpus_total"] != 4 {
		t.Errorf("master /metrics/snapshot: %v", snap)
	}

	checkLoggingLevel(t, c, get, masterCli)
}

// checkLoggingLevel: no debug line at --log-level info; one after SET 1;
// none again once a short SET has reverted.
func checkLoggingLevel(t *testing.T, c *cluster, get func(*mmaster.Call) *mmaster.Response, cli mcalls.Sender) {
	debugLines := func() int { return strings.Count(c.Master.Stderr.String(), "scheduler call rejected") }
	reject := func() {
		if code, _ := postRaw(t, c.MasterAddr, "/api/v1/scheduler", "application/json", []byte(`{"type":"DECLINE"}`), nil); code != http.StatusBadRequest {
			t.Fatalf("a DECLINE without a framework answered %d, want 400", code)
		}
	}
	reject()
	if n := debugLines(); n != 0 {
		t.Fatalf("%d debug lines at --log-level info", n)
	}
	set := func(level uint32, d time.Duration) {
		resp, err := cli.Send(context.Background(), mcalls.NonStreaming(mcalls.SetLoggingLevel(level, d)))
		if err != nil {
			t.Fatalf("SET_LOGGING_LEVEL: %v", err)
		}
		if resp != nil {
			resp.Close()
		}
	}
	set(1, 10*time.Minute)
	if lv := get(mcalls.GetLoggingLevel()).GetLoggingLevel.Level; lv != 1 {
		t.Fatalf("GET_LOGGING_LEVEL after SET 1: %d", lv)
	}
	reject()
	testcluster.WaitFor(t, 10*time.Second, "the rejected call's debug line", func() bool { return debugLines() == 1 })
	set(1, time.Millisecond)
	testcluster.WaitFor(t, 10*time.Second, "the level to revert to 0", func() bool {
		return get(mcalls.GetLoggingLevel()).GetLoggingLevel.Level == 0
	})
	reject()
	// The revert applies the level before GET_LOGGING_LEVEL reads 0, and
	// a rejection logs before it answers: a line now would be in already.
	if n := debugLines(); n != 1 {
		t.Errorf("%d debug lines after the level reverted, want still 1", n)
	}
}

func agentSend(t *testing.T, cli acalls.Sender, call *magent.Call, out *magent.Response) {
	t.Helper()
	resp, err := cli.Send(context.Background(), acalls.NonStreaming(call))
	if err != nil {
		t.Fatalf("agent %s: %v", call.Type, err)
	}
	defer resp.Close()
	if err := resp.Decode(out); err != nil {
		t.Fatalf("agent %s: decode: %v", call.Type, err)
	}
}

func getJSONFrom(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}
