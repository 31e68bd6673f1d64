package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/framework/sched"
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
	detachedDone(err)
	if code, ok := err.(exitCode); ok {
		os.Exit(int(code))
	}
	return err
}

// runOpts is what runTask parsed from its flags.
type runOpts struct {
	masters  []string
	tlsCA    string
	cred     credFlags
	task     runTaskSpec
	role     string
	timeout  time.Duration
	failover time.Duration
	// reconnect bounds the wait for a master after losing one.
	reconnect time.Duration
	detach    bool
	json      bool
}

func parseRunFlags(args []string, stderr io.Writer) (*runOpts, error) {
	o := &runOpts{}
	fs := newFlagSet("run", "[flags] -- CMD [ARGS...]", "Run CMD ARGS as a one-off task through a framework of its own: print the task's states and,\nas the task writes them, its stdout and stderr, and exit with its exit code. A master failover does not end it: it\nre-subscribes to any of the masters with its framework id and finds its task again.", stderr)
	masters := fs.String("master", "127.0.0.1:5050", "the masters' HTTP addresses, `host:port[,...]`; any master of the cluster will do, and after a\nfailover allot run re-subscribes through whichever answers")
	addClientTLSFlag(fs, &o.tlsCA)
	cpus := fs.Float64("cpus", 0.1, "cpus for the task")
	mem := fs.Float64("mem", 32, "memory for the task, MB")
	gpus := fs.Int("gpus", 0, "whole GPUs for the task (its framework then declares GPU_RESOURCES; docs/gpus.md)")
	shell := fs.Bool("shell", false, "run the command through /bin/sh -c (CMD ARGS joined by spaces)")
	fs.StringVar(&o.role, "role", "*", "role to run in")
	fs.DurationVar(&o.timeout, "timeout", 0, "give up (and kill the task) after this long; 0 waits forever")
	name := fs.String("name", "", "the task's name (and its framework's, after \"allot run: \"); default: the command line")
	var env envFlag
	fs.Var(&env, "env", "set `K=V` in the task's environment; repeat for more")
	fs.BoolVar(&o.detach, "detach", false, "print the task's id once it runs and return, leaving a background allot run (its log in the\ntemporary directory) to keep the framework subscribed and tear it down when the task ends;\nallot logs ID --follow prints the task's output")
	fs.DurationVar(&o.reconnect, "reconnect-timeout", 15*time.Second, "after losing its master (the connection ends, or no HEARTBEAT for 3 of the master's heartbeat\nintervals), give up when no master of --master takes the re-subscription within this long")
	fs.DurationVar(&o.failover, "failover-timeout", time.Minute, "how long the masters keep the task while allot run is disconnected from them (a master\nfailover, a network cut) before they kill it; allot run re-subscribes within it")
	fs.BoolVar(&o.json, "json", false, "print JSON on stdout: with --detach {\"task_id\": ...}; else the task's output goes to stderr\nand, once it ends, its task_id, framework_id, agent_id, state, reason, message and exit_code")
	addCredFlags(fs, &o.cred)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	argv := fs.Args()
	if len(argv) == 0 {
		return nil, usagef("no command: allot run [flags] -- CMD [ARGS...]")
	}
	if !(*cpus > 0) || !(*mem > 0) {
		return nil, usagef("--cpus and --mem must be positive")
	}
	if o.failover <= 0 {
		return nil, usagef("--failover-timeout must be positive: with none the masters kill the task when a failover cuts the connection")
	}
	need, err := resources.Parse(fmt.Sprintf("cpus:%g;mem:%g", *cpus, *mem) + gpuSpec(*gpus))
	if err != nil {
		return nil, usagef("--cpus/--mem/--gpus: %v", err)
	}
	o.masters = splitMasters(*masters)
	if len(o.masters) == 0 {
		return nil, usagef("--master: no address")
	}
	if o.reconnect <= 0 {
		return nil, usagef("--reconnect-timeout must be positive")
	}
	o.task = runTaskSpec{argv: argv, shell: *shell, need: need, name: *name, env: env}
	return o, nil
}

// runFirstSubscribe bounds how long allot run tries to reach a master
// before saying why it cannot; once subscribed, --reconnect-timeout bounds
// each wait for a master after losing one.
const runFirstSubscribe = 15 * time.Second

func runTask(args []string, stdout, stderr io.Writer) error {
	o, err := parseRunFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.detach && !isDetachedChild() {
		return detachRun(args, stdout, stderr, o.json)
	}
	p := newRunPlanner(o.task, fmt.Sprintf("allot-run-%d", time.Now().UnixNano()), stderr)
	p.onState = detachedReport()
	cl, err := newRunClient(o, p, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	runCtx, cancelRun := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() { ended <- cl.Run(runCtx) }()
	select {
	case <-cl.Subscribed():
		fmt.Fprintf(stderr, "framework %s subscribed\n", cl.ID())
	case err := <-ended:
		cancelRun()
		return fmt.Errorf("subscribing to %s: %w", strings.Join(o.masters, ","), err)
	case <-ctx.Done():
		cancelRun()
		<-ended
		return fmt.Errorf("stopped: %v", ctx.Err())
	}
	hc := withCredential(newHTTPClient(runTailTimeout, o.tlsCA), &o.cred)
	taskOut := stdout
	if o.json {
		taskOut = stderr // stdout is the JSON document alone
	}
	tail := startSandboxTail(hc, cl.ID(), p, taskOut, stderr)
	watchCtx, stopWatch := context.WithCancel(context.Background())
	defer stopWatch()
	never := watchPlacement(watchCtx, hc, strings.Join(o.masters, ","), cl.ID(), runPlacementPoll, p.isLaunched, stderr) // placement.go
	defer func() {
		tail.stop()
		if err := cl.Teardown(); err != nil {
			fmt.Fprintf(stderr, "allot run: tearing down framework %s: %v (the masters remove it within --failover-timeout)\n", cl.ID(), err)
		}
		cancelRun()
		<-ended
	}()
	select {
	case st := <-p.done:
		tail.stop() // its last pull prints what the task wrote last
		exit := taskExit(st)
		if o.json {
			if err := printRunResult(stdout, cl.ID(), st, exit); err != nil { // run_json.go
				return err
			}
		}
		return exit
	case err := <-never:
		return err
	case err := <-ended:
		ended <- err // for the deferred teardown's wait
		if errors.Is(err, sched.ErrNoMaster) {
			return fmt.Errorf("lost the masters: %v; the task may still run until their --failover-timeout (%v) passes", err, o.failover)
		}
		if errors.Is(err, sched.ErrRemoved) {
			return fmt.Errorf("the masters removed framework %s, and with it its task: %v", cl.ID(), err)
		}
		return fmt.Errorf("framework %s ended: %v", cl.ID(), err)
	case <-ctx.Done():
		if taskID, agent, _, launched := p.current(); launched {
			cl.Kill(taskID, agent)
		}
		return fmt.Errorf("stopped: %v", ctx.Err())
	}
}

// taskExit is the exit allot run makes for a task's terminal status: 0
// for FINISHED, the command's own code for FAILED, 137 otherwise.
func taskExit(st mesos.TaskStatus) error {
	switch st.GetState() {
	case mesos.TASK_FINISHED:
		return nil
	case mesos.TASK_FAILED:
		if m := statusRE.FindStringSubmatch(st.GetMessage()); m != nil {
			n, _ := strconv.Atoi(m[1])
			if n > 0 && n < 256 {
				return exitCode(n)
			}
		}
		return exitCode(1)
	default:
		return exitCode(137)
	}
}

// newRunClient is the sched client of allot run's framework: a failover
// timeout from --failover-timeout, every master of --master to re-subscribe
// through, and p reconciled after every subscription.
func newRunClient(o *runOpts, p *runPlanner, stderr io.Writer) (*sched.Client, error) {
	var credp *auth.Credential
	if cred, err := o.cred.credential(); err != nil {
		return nil, err
	} else if cred.Principal != "" {
		credp = &cred
	}
	tlsCfg, err := clientTLS(o.tlsCA)
	if err != nil {
		return nil, err
	}
	user := os.Getenv("USER")
	if user == "" {
		user = "root"
	}
	host, _ := os.Hostname()
	cl, err := sched.New(sched.Config{
		Masters: o.masters,
		Framework: mesos.FrameworkInfo{User: user, Name: "allot run: " + o.task.taskName(), Role: &o.role, Hostname: &host,
			Capabilities: runCapabilities(o.task.need)},
		FailoverTimeout:       o.failover,
		Demand:                runDemand(o.task.need), // placement.go: the allocator says why no offer fits
		FirstSubscribeTimeout: runFirstSubscribe,
		ReconnectTimeout:      o.reconnect,
		TLS:                   tlsCfg,
		Credential:            credp,
		Logf:                  log.New(stderr, "allot run: ", 0).Printf,
	}, p)
	if err != nil {
		return nil, err
	}
	p.reconcile = func(taskID, agentID string) {
		cl.Call(context.Background(), calls.Reconcile(calls.ReconcileTasks(map[string]string{taskID: agentID})))
	}
	return cl, nil
}
