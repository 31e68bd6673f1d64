package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/resources"
)

func init() {
	register(command{name: "run", summary: "run one command as a task and exit with its exit code", run: runRun})
}

// exitCode is returned by run to make the dispatcher exit with the task's
// code without printing an error.
type exitCode int

func (e exitCode) Error() string { return "exit status " + strconv.Itoa(int(e)) }

var statusRE = regexp.MustCompile(`status (\d+)`)

// runRun exits the process with the task's exit code (main's dispatcher
// knows only 0, 1 and 2), after the framework has been torn down.
func runRun(args []string, stdout, stderr io.Writer) error {
	err := runTask(args, stdout, stderr)
	if code, ok := err.(exitCode); ok {
		os.Exit(int(code))
	}
	return err
}

func runTask(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", "[flags] -- CMD [ARGS...]", "Run CMD ARGS as a one-off task through a framework of its own: print the task's states, then\nits stdout and stderr, and exit with its exit code.", stderr)
	masterAddr := fs.String("master", "127.0.0.1:5050", "master `host:port`")
	var tlsCA string
	addClientTLSFlag(fs, &tlsCA)
	cpus := fs.Float64("cpus", 0.1, "cpus for the task")
	mem := fs.Float64("mem", 32, "memory for the task, MB")
	shell := fs.Bool("shell", false, "run the command through /bin/sh -c (CMD ARGS joined by spaces)")
	role := fs.String("role", "*", "role to run in")
	timeout := fs.Duration("timeout", 0, "give up (and kill the task) after this long; 0 waits forever")
	var cred credFlags
	addCredFlags(fs, &cred)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	doOpts := []httpcli.ConfigOpt{httpcli.Timeout(10 * time.Second)}
	if o, err := cred.httpcliOpt(); err != nil {
		return err
	} else if o != nil {
		doOpts = append(doOpts, o)
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return usagef("no command: allot run [flags] -- CMD [ARGS...]")
	}
	ci := mesos.CommandInfo{Value: &argv[0], Arguments: argv, Shell: boolp(false)}
	if *shell {
		s := strings.Join(argv, " ")
		ci = mesos.CommandInfo{Value: &s, Shell: boolp(true)}
	}
	if !(*cpus > 0) || !(*mem > 0) {
		return usagef("--cpus and --mem must be positive")
	}
	needRes, err := resources.Parse(fmt.Sprintf("cpus:%g;mem:%g", *cpus, *mem))
	if err != nil {
		return usagef("--cpus/--mem: %v", err)
	}

	tlsCfg, err := clientTLS(tlsCA)
	if err != nil {
		return err
	}
	// hc also reads the task's stdout and stderr from its agent, which
	// may require the same credential (--authenticate-http-readonly).
	hc := withCredential(newHTTPClient(0, tlsCA), &cred)
	caller := httpsched.NewCaller(httpcli.New(
		httpcli.Endpoint(masterURL(hc, *masterAddr, "/api/v1/scheduler")),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(append(doOpts, httpcli.TLSConfig(tlsCfg))...))))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	user := os.Getenv("USER")
	if user == "" {
		user = "root"
	}
	host, _ := os.Hostname()
	info := &mesos.FrameworkInfo{User: user, Name: "allot run: " + strings.Join(argv, " "), Role: role, Hostname: &host}
	resp, err := caller.Call(ctx, calls.Subscribe(info))
	if err != nil {
		return fmt.Errorf("subscribing to %s: %w", *masterAddr, tlsconf.Explain(err, "master at "+*masterAddr))
	}
	defer resp.Close()
	var (
		fwID     string
		taskID   = fmt.Sprintf("allot-run-%d", time.Now().UnixNano())
		agentURL string
		launched bool
	)
	do := func(c *scheduler.Call) error {
		c.FrameworkID = &mesos.FrameworkID{Value: fwID}
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return calls.CallNoData(cctx, caller, c)
	}
	defer func() {
		if fwID != "" {
			do(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
		}
	}()
	events := make(chan scheduler.Event)
	errc := make(chan error, 1)
	go func() {
		for {
			var e scheduler.Event
			if err := resp.Decode(&e); err != nil {
				errc <- err
				return
			}
			events <- e
		}
	}()
	for {
		var e scheduler.Event
		select {
		case <-ctx.Done():
			if launched {
				do(calls.Kill(taskID, ""))
			}
			return fmt.Errorf("stopped: %v", ctx.Err())
		case err := <-errc:
			return fmt.Errorf("event stream ended: %v", err)
		case e = <-events:
		}
		switch e.Type {
		case scheduler.Event_SUBSCRIBED:
			fwID = e.Subscribed.FrameworkID.Value
			fmt.Fprintf(stderr, "framework %s subscribed\n", fwID)
		case scheduler.Event_OFFERS:
			var decline []mesos.OfferID
			for _, o := range e.Offers.Offers {
				if launched || !offerHas(o, needRes) {
					decline = append(decline, o.ID)
					continue
				}
				res := resources.ToMesos(needRes, "", "")
				t := mesos.TaskInfo{Name: strings.Join(argv, " "), TaskID: mesos.TaskID{Value: taskID}, AgentID: o.AgentID, Command: &ci, Resources: res}
				if err := do(calls.Accept(calls.OfferOperations{calls.OpLaunch(t)}.WithOffers(o.ID))); err != nil {
					return fmt.Errorf("launching: %w", err)
				}
				launched = true
				if o.URL != nil {
					agentURL = tlsconf.URL(o.URL.Scheme == "https", net.JoinHostPort(o.URL.Address.GetHostname(), strconv.Itoa(int(o.URL.Address.GetPort()))), "")
				}
				fmt.Fprintf(stderr, "task %s launched on agent %s\n", taskID, o.AgentID.Value)
			}
			if len(decline) > 0 {
				do(calls.Decline(decline...).With(calls.RefuseSeconds(time.Hour)))
			}
		case scheduler.Event_UPDATE:
			st := e.Update.Status
			if len(st.UUID) > 0 {
				do(calls.Acknowledge(st.GetAgentID().GetValue(), st.TaskID.Value, st.UUID))
			}
			if st.TaskID.Value != taskID {
				continue
			}
			msg := st.GetMessage()
			fmt.Fprintf(stderr, "task %s: %s %s\n", taskID, st.GetState(), msg)
			if !taskstate.IsTerminal(st.GetState()) {
				continue
			}
			if agentURL != "" {
				for _, f := range []struct {
					name string
					w    io.Writer
				}{{"stdout", stdout}, {"stderr", stderr}} {
					copySandboxFile(hc, agentURL, fwID, taskID, f.name, f.w)
				}
			}
			switch st.GetState() {
			case mesos.TASK_FINISHED:
				return nil
			case mesos.TASK_FAILED:
				if m := statusRE.FindStringSubmatch(msg); m != nil {
					n, _ := strconv.Atoi(m[1])
					if n > 0 && n < 256 {
						return exitCode(n)
					}
				}
				return exitCode(1)
			default:
				return exitCode(137)
			}
		case scheduler.Event_ERROR:
			return fmt.Errorf("master: %s", e.Error.Message)
		}
	}
}

func copySandboxFile(hc *http.Client, agentURL, fw, ex, name string, w io.Writer) {
	resp, err := hc.Get(fmt.Sprintf("%s/files/sandbox?framework_id=%s&executor_id=%s&file=%s", agentURL, fw, ex, name))
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		io.Copy(w, resp.Body)
	}
}

func boolp(b bool) *bool { return &b }

func offerHas(o mesos.Offer, need resources.Resources) bool {
	byRole, err := resources.FromMesos(o.Resources)
	if err != nil {
		return false
	}
	return byRole[resources.Unreserved].Contains(need)
}
