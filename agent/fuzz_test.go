package agent

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	"github.com/allot-sched/allot/api"
)

// Fuzz targets for the bytes an agent reads from the network: the master's
// RecordIO event stream and the executor HTTP API.

// FuzzReadFrame reads RecordIO frames ("<length>\n<bytes>") until an error,
// as the agent reads its master's stream, and decodes each as an AgentEvent
// (the decode only: handling a RUN would launch a process). It also checks
// that frames written in RecordIO read back unchanged.
func FuzzReadFrame(f *testing.F) {
	ping, _ := proto.Marshal(&api.AgentEvent{Type: api.AgentEventType_PING})
	reg, _ := proto.Marshal(&api.AgentEvent{Type: api.AgentEventType_REGISTERED, AgentId: "a1"})
	f.Add(recordIO(ping, reg))
	f.Add(recordIO(nil))
	for _, s := range []string{"", "\n", "5\nab", "-1\n", "x\n", " 3 \nabc", "99999999999999999999\n", "67108865\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		br := bufio.NewReader(bytes.NewReader(in))
		var frames [][]byte
		for {
			b, err := readFrame(br)
			if err != nil {
				break
			}
			frames = append(frames, b)
			var ev api.AgentEvent
			proto.Unmarshal(b, &ev)
		}
		br = bufio.NewReader(bytes.NewReader(recordIO(frames...)))
		for i, want := range frames {
			got, err := readFrame(br)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("frame %d: read %q, %v; wrote %q", i, got, err, want)
			}
		}
	})
}

func recordIO(frames ...[]byte) []byte {
	var out []byte
	for _, b := range frames {
		out = strconv.AppendInt(out, int64(len(b)), 10)
		out = append(out, '\n')
		out = append(out, b...)
	}
	return out
}

// FuzzExecutorCall posts a body to the executor API handler (httptest, no
// listener) in JSON or protobuf: it answers a 4xx naming the problem or
// 202, never panics or 500s.
func FuzzExecutorCall(f *testing.F) {
	for _, s := range []string{
		`{}`, `{nope`, `{"type":"FLY"}`,
		`{"type":"SUBSCRIBE","framework_id":{"value":"f"},"executor_id":{"value":"e"},"subscribe":{}}`,
		`{"type":"UPDATE","framework_id":{"value":"f"},"executor_id":{"value":"e"}}`,
		`{"type":"UPDATE","framework_id":{"value":"f"},"executor_id":{"value":"e"},"update":{"status":{"task_id":{"value":"t"},"state":"TASK_RUNNING"}}}`,
		`{"type":"UPDATE","framework_id":{"value":"f"},"executor_id":{"value":"e"},"update":{"status":{"task_id":{"value":"t"},"state":"TASK_RUNNING","uuid":"AAAA"}}}`,
		`{"type":"MESSAGE","framework_id":{"value":"f"},"executor_id":{"value":"e"}}`,
		`{"type":"MESSAGE","framework_id":{"value":"f"},"executor_id":{"value":"e"},"message":{"data":"AA=="}}`,
	} {
		f.Add([]byte(s), false)
		var c exec1.Call
		if api.JSON.Unmarshal([]byte(s), &c) == nil {
			if b, err := c.Marshal(); err == nil {
				f.Add(b, true)
			}
		}
	}
	a, err := New(Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: f.TempDir(),
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, asProto bool) {
		ct := api.MediaJSON
		if asProto {
			ct = api.MediaProtobuf
		}
		req := httptest.NewRequest(http.MethodPost, "/api/v1/executor", bytes.NewReader(body))
		req.Header.Set("Content-Type", ct)
		w := httptest.NewRecorder()
		a.handleExecutor(w, req)
		if w.Code >= 500 || (w.Code != http.StatusAccepted && w.Code < 400) {
			t.Fatalf("answered %d: %s", w.Code, w.Body.String())
		}
		// drain what a MESSAGE queued for the (absent) master
		for len(a.sendq) > 0 {
			<-a.sendq
		}
	})
}
