package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/testcluster"
)

var (
	allotBin  string // the allot binary under test
	testExec  string // the mesos-go custom executor
	mshBin    string // mesos-go's msh
	mwatchBin string // mesos-go's mwatch
)

// ALLOT_RACE=1: masters and agents run with the race detector; a race
// fails the test that saw it (see testcluster.Start).
func TestMain(m *testing.M) {
	testcluster.Main(m, []testcluster.Package{
		testcluster.Allot,
		{Name: "testexec", Path: "./testexec"},
		{Name: "msh", Path: "github.com/mesos/mesos-go/api/v1/cmd/msh"},
		{Name: "mwatch", Path: "github.com/mesos/mesos-go/api/v1/cmd/mwatch"},
	}, func(bins map[string]string) {
		allotBin, testExec, mshBin, mwatchBin = bins["allot"], bins["testexec"], bins["msh"], bins["mwatch"]
	})
}

// agentFlags are every integration agent's flags: usage sampled often
// enough for the tests that read it, a registration timeout short enough
// for the tests that let an executor miss it, debug logs for failures,
// and status updates resent after 1 s (not Mesos's 10 s): the tests that
// restart masters and agents wait on updates a restart lost.
var agentFlags = []string{"--usage-interval", "300ms", "--executor-registration-timeout", "3s", "--log-level", "debug",
	"--status-update-retry-interval", "1s", "--status-update-retry-max", "32s"}

// cluster is a master and agents on loopback.
type cluster struct {
	*testcluster.Cluster
}

func newCluster(t testing.TB, agents int, masterFlags ...string) *cluster {
	t.Helper()
	return &cluster{testcluster.New(t, testcluster.Config{
		Bin:         allotBin,
		Agents:      agents,
		MasterFlags: append([]string{"--log-level", "debug"}, masterFlags...),
		AgentFlags:  agentFlags,
	})}
}

// state fetches the master's /state.
func (c *cluster) state() operator.State {
	var st operator.State
	resp, err := http.Get("http://" + c.MasterAddr + "/state")
	if err != nil {
		return st
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&st)
	return st
}

// agentState fetches an agent's /state.
func agentState(addr string) (map[string]any, error) {
	resp, err := http.Get("http://" + addr + "/state")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var doc map[string]any
	err = json.NewDecoder(resp.Body).Decode(&doc)
	return doc, err
}

// postRaw sends body to path on addr with the given content type and
// headers, returning status and body text.
func postRaw(t testing.TB, addr, path, ctype string, body []byte, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+path, bytes.NewReader(body))
	req.Header.Set("Content-Type", ctype)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// readLines returns the lines of a file, or nil.
func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}
