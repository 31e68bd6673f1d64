package framework

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log"
	"net"
	nethttp "net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	mexec "github.com/mesos/mesos-go/api/v1/lib/executor"
	ecalls "github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpexec"

	"github.com/allot-sched/allot/auth"
)

// Environment switching the application binary into executor mode.
const (
	envExecutor = "ALLOT_FRAMEWORK_EXECUTOR"
	envDriver   = "ALLOT_FRAMEWORK_DRIVER"
	envCores    = "ALLOT_FRAMEWORK_CORES"
	envBlockMem = "ALLOT_FRAMEWORK_BLOCK_MEM"
)

// executorOverhead is the ExecutorInfo's own resources (Mesos charges the
// executor separately from its task).
const executorCPUs, executorMem = 0.1, 32

// Main must be called first thing in an application's main: in a process
// started as an executor it runs the executor and exits; in the driver it
// returns at once.
func Main() {
	if os.Getenv(envExecutor) != "1" {
		return
	}
	if err := runMesosExecutor(); err != nil {
		log.Printf("executor: %v", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// mesosExecutor is the executor process's side of the agent's executor API:
// a mesos-go executor whose one task is "be an executor of the driver at
// $ALLOT_FRAMEWORK_DRIVER until killed".
type mesosExecutor struct {
	cfg      config.Config
	driver   string
	cores    int
	blockMem int64
	host     string
	cli      ecalls.Sender // non-streaming calls (UPDATE)
	ex       *Executor     // nil until LAUNCH
	task     mesos.TaskID
}

// runMesosExecutor subscribes to the agent and serves its events until the
// task is killed, the agent goes away or the driver stops answering.
func runMesosExecutor() error {
	m, sub, err := newMesosExecutor()
	if err != nil {
		return err
	}
	resp, err := sub.Send(context.Background(), ecalls.NonStreaming(ecalls.Subscribe(nil, nil)))
	if err != nil {
		return fmt.Errorf("subscribing to agent %s: %w", m.cfg.AgentEndpoint, err)
	}
	defer resp.Close()
	events := make(chan mexec.Event)
	errc := make(chan error, 1)
	go func() {
		for {
			var e mexec.Event
			if err := resp.Decode(&e); err != nil {
				errc <- err
				return
			}
			events <- e
		}
	}()
	var lost <-chan struct{}
	for {
		select {
		case err := <-errc:
			if m.ex != nil {
				m.ex.Stop()
			}
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("agent connection: %w", err)
		case <-lost:
			m.update(m.task, mesos.TASK_FAILED, "driver "+m.driver+" stopped answering; executor exits")
			m.ex.Stop()
			return nil
		case e := <-events:
			done, err := m.handle(e)
			if done || err != nil {
				return err
			}
			if m.ex != nil {
				lost = m.ex.DriverLost()
			}
		}
	}
}

// newMesosExecutor reads the agent's environment and returns the executor
// and the sender to subscribe with.
func newMesosExecutor() (*mesosExecutor, ecalls.Sender, error) {
	cfg, err := config.FromEnv()
	if err != nil {
		return nil, nil, fmt.Errorf("not started by a Mesos agent: %w", err)
	}
	m := &mesosExecutor{cfg: cfg, driver: os.Getenv(envDriver)}
	m.cores, _ = strconv.Atoi(os.Getenv(envCores))
	m.blockMem, _ = strconv.ParseInt(os.Getenv(envBlockMem), 10, 64)
	m.host, _, _ = net.SplitHostPort(cfg.AgentEndpoint)
	u := url.URL{Scheme: "http", Host: cfg.AgentEndpoint, Path: "/api/v1/executor"}
	hopts := []httpcli.Opt{httpcli.Endpoint(u.String()), httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second), httpcli.Transport(func(t *nethttp.Transport) { t.MaxIdleConnsPerHost = 4 })))}
	if h := auth.ExecutorAuthorization(); h != "" { // the agent runs with --authenticate-http-executors
		hopts = append(hopts, httpcli.RequestOptions(httpcli.Header("Authorization", h)))
	}
	hc := httpcli.New(hopts...)
	opts := mexec.CallOptions{ecalls.Framework(cfg.FrameworkID), ecalls.Executor(cfg.ExecutorID)}
	m.cli = ecalls.SenderWith(httpexec.NewSender(hc.Send), opts...)
	sub := ecalls.SenderWith(httpexec.NewSender(hc.Send, httpcli.Close(true)), opts...)
	return m, sub, nil
}

// update sends a task status update to the agent.
func (m *mesosExecutor) update(task mesos.TaskID, s mesos.TaskState, msg string) {
	uuid := make([]byte, 16)
	rand.Read(uuid)
	st := mesos.TaskStatus{TaskID: task, State: s.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: uuid, Message: &msg}
	r, err := m.cli.Send(context.Background(), ecalls.NonStreaming(ecalls.Update(st)))
	if r != nil {
		r.Close()
	}
	if err != nil {
		log.Printf("executor: update %s: %v", s, err)
	}
}

// handle serves one agent event; done says the process should exit.
func (m *mesosExecutor) handle(e mexec.Event) (done bool, err error) {
	switch e.Type {
	case mexec.Event_LAUNCH:
		if m.ex != nil {
			m.update(e.Launch.Task.TaskID, mesos.TASK_ERROR, "this executor already runs "+m.task.Value)
			return false, nil
		}
		m.task = e.Launch.Task.TaskID
		ex, err := StartExecutor(ExecutorConfig{ID: m.cfg.ExecutorID, Driver: m.driver, Cores: m.cores, BlockMem: m.blockMem,
			Dir: m.cfg.Sandbox + "/blocks", Listen: net.JoinHostPort(m.host, "0"), Advertise: m.host})
		if err != nil {
			m.update(m.task, mesos.TASK_FAILED, err.Error())
			return true, err
		}
		m.ex = ex
		m.update(m.task, mesos.TASK_RUNNING, "serving tasks at "+ex.URL())
	case mexec.Event_KILL:
		m.update(e.Kill.TaskID, mesos.TASK_KILLED, "released by the driver")
		if m.ex != nil {
			m.ex.Stop()
		}
		return true, nil
	case mexec.Event_SHUTDOWN:
		if m.ex != nil {
			m.update(m.task, mesos.TASK_KILLED, "executor shut down")
			m.ex.Stop()
		}
		return true, nil
	case mexec.Event_ERROR:
		return true, fmt.Errorf("agent error: %s", e.Error.GetMessage())
	}
	return false, nil
}
