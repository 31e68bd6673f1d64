// Command testexec is a custom executor written with mesos-go's executor
// library, as a framework author would write one. Each LAUNCH runs in
// process: a task whose data is "sleep" stays RUNNING until killed; every
// other task reports TASK_RUNNING and TASK_FINISHED at once (so a benchmark
// measures the control plane, not fork/exec). It re-subscribes after an
// agent restart when its framework checkpoints.
//
// It presents the executor token of an agent with
// --authenticate-http-executors, as a mesos-go executor must (one
// httpcli.RequestOptions; TESTEXEC_NO_TOKEN=1 leaves it out, as an
// unmodified executor would). A task whose data is "impersonate:ID" calls
// the executor API as executor ID with this executor's own token and
// finishes if the agent refuses that with 403, failing otherwise.
package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log"
	nethttp "net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpexec"
)

type state struct {
	mu      sync.Mutex
	cli     calls.Sender
	tasks   map[string]mesos.TaskInfo
	unacked map[string]executor.Call_Update
	quit    bool
	work    chan func()
}

func main() {
	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	u := url.URL{Scheme: "http", Host: cfg.AgentEndpoint, Path: "/api/v1/executor"}
	hopts := []httpcli.Opt{httpcli.Endpoint(u.String()), httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second), httpcli.Transport(func(t *nethttp.Transport) { t.MaxIdleConnsPerHost = 16 })))}
	if tok := os.Getenv("MESOS_EXECUTOR_AUTHENTICATION_TOKEN"); tok != "" && os.Getenv("TESTEXEC_NO_TOKEN") == "" {
		hopts = append(hopts, httpcli.RequestOptions(httpcli.Header("Authorization", "Bearer "+tok)))
	}
	http := httpcli.New(hopts...)
	agentURL, fwID = u.String(), cfg.FrameworkID
	opts := executor.CallOptions{calls.Framework(cfg.FrameworkID), calls.Executor(cfg.ExecutorID)}
	st := &state{cli: calls.SenderWith(httpexec.NewSender(http.Send), opts...), tasks: map[string]mesos.TaskInfo{},
		unacked: map[string]executor.Call_Update{}, work: make(chan func(), 1<<16)}
	for i := 0; i < 4; i++ {
		go func() {
			for f := range st.work {
				f()
			}
		}()
	}
	sub := calls.SenderWith(httpexec.NewSender(http.Send, httpcli.Close(true)), opts...)
	lost := time.Now()
	for {
		st.mu.Lock()
		var ut []mesos.TaskInfo
		for _, t := range st.tasks {
			ut = append(ut, t)
		}
		var uu []executor.Call_Update
		for _, x := range st.unacked {
			uu = append(uu, x)
		}
		st.mu.Unlock()
		resp, err := sub.Send(context.Background(), calls.NonStreaming(calls.Subscribe(ut, uu)))
		if err == nil {
			err = loop(st, resp)
			resp.Close()
			lost = time.Now()
		}
		if st.quit {
			return
		}
		log.Printf("disconnected: %v", err)
		if !cfg.Checkpoint || time.Since(lost) > cfg.RecoveryTimeout {
			os.Exit(1)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func loop(st *state, resp mesos.Response) error {
	for {
		var e executor.Event
		if err := resp.Decode(&e); err != nil {
			if err == io.EOF {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		switch e.Type {
		case executor.Event_LAUNCH:
			t := e.Launch.Task
			st.mu.Lock()
			st.tasks[t.TaskID.Value] = t
			st.mu.Unlock()
			// A few workers send updates, each task's in order, so a burst
			// of launches is not answered one round trip at a time.
			st.work <- func() {
				update(st, t.TaskID, mesos.TASK_RUNNING)
				if other, ok := strings.CutPrefix(string(t.Data), "impersonate:"); ok {
					impersonate(st, t.TaskID, other)
					return
				}
				if string(t.Data) != "sleep" {
					update(st, t.TaskID, mesos.TASK_FINISHED)
				}
			}
		case executor.Event_KILL:
			update(st, e.Kill.TaskID, mesos.TASK_KILLED)
		case executor.Event_ACKNOWLEDGED:
			st.mu.Lock()
			delete(st.unacked, string(e.Acknowledged.UUID))
			delete(st.tasks, e.Acknowledged.TaskID.Value)
			st.mu.Unlock()
		case executor.Event_MESSAGE:
			// Echo framework messages back, so tests can see both directions.
			r, err := st.cli.Send(context.Background(), calls.NonStreaming(calls.Message(append([]byte("echo:"), e.Message.Data...))))
			if r != nil {
				r.Close()
			}
			if err != nil {
				log.Printf("message: %v", err)
			}
		case executor.Event_SHUTDOWN:
			st.quit = true
			return nil
		case executor.Event_ERROR:
			return fmt.Errorf("agent error: %s", e.Error.Message)
		}
	}
}

// agentURL and fwID are the executor API's address and this executor's
// framework, for impersonate's raw call.
var agentURL, fwID string

// impersonate sends a MESSAGE as executor other with this executor's token
// and reports the agent's answer: FINISHED for a 403, FAILED otherwise.
func impersonate(st *state, id mesos.TaskID, other string) {
	body := `{"type":"MESSAGE","framework_id":{"value":"` + fwID + `"},"executor_id":{"value":"` + other + `"},"message":{"data":"aGk="}}`
	req, _ := nethttp.NewRequest("POST", agentURL, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+os.Getenv("MESOS_EXECUTOR_AUTHENTICATION_TOKEN"))
	code, msg := 0, ""
	if resp, err := nethttp.DefaultClient.Do(req); err != nil {
		msg = err.Error()
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		code, msg = resp.StatusCode, strings.TrimSpace(string(b))
	}
	s := mesos.TASK_FAILED
	if code == nethttp.StatusForbidden {
		s = mesos.TASK_FINISHED
	}
	updateMsg(st, id, s, fmt.Sprintf("impersonating %s answered %d: %s", other, code, msg))
}

func update(st *state, id mesos.TaskID, s mesos.TaskState) { updateMsg(st, id, s, "") }

func updateMsg(st *state, id mesos.TaskID, s mesos.TaskState, msg string) {
	b := make([]byte, 16)
	rand.Read(b)
	status := mesos.TaskStatus{TaskID: id, State: s.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: b}
	if msg != "" {
		status.Message = &msg
	}
	upd := calls.Update(status)
	st.mu.Lock()
	st.unacked[string(b)] = *upd.Update
	st.mu.Unlock()
	r, err := st.cli.Send(context.Background(), calls.NonStreaming(upd))
	if r != nil {
		r.Close()
	}
	if err != nil {
		log.Printf("update %s %s: %v", id.Value, s, err)
	}
}
