package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/internal/shortid"
	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/master"
)

// The operator CLI, in the habits of `nomad` and the `mesos` CLI: one verb
// per thing an operator looks at, an aligned table by default and --json
// for scripts, --master (or ALLOT_MASTER) naming any master of the cluster.
// Every verb reads the leader's /state (followers redirect), so the CLI
// shows exactly what the master's operator API shows.

func init() {
	register(command{name: "status", summary: "the cluster at a glance: leader, raft peers, sorter, agents, frameworks, resources", run: runStatus})
	register(command{name: "agents", summary: "list agents: resources, allocation, usage, tasks", run: runAgents})
	register(command{name: "frameworks", summary: "list frameworks: role, tasks, offers, allocation", run: runFrameworks})
	register(command{name: "tasks", summary: "list tasks [--framework ID] [--state S]", run: runTasks})
	register(command{name: "logs", summary: "print a task's stdout (or --stderr), --follow to keep printing", run: runLogs})
	register(command{name: "explain", summary: "why a framework is or is not offered an agent's resources", run: runExplain})
}

// cliFlags are the flags every verb takes.
type cliFlags struct {
	masters string
	json    bool
	timeout time.Duration
	tlsCA   string // --tls-ca (tls_flags.go)
	cred    credFlags
	fullIDs bool // --full-ids, on the verbs that print ids in tables (table.go)
}

// newCLIFlags makes a verb's flag set with the common flags.
func newCLIFlags(name, usage, description string, stderr io.Writer) (*flag.FlagSet, *cliFlags) {
	c := &cliFlags{}
	fs := newFlagSet(name, usage, description, stderr)
	fs.StringVar(&c.masters, "master", "127.0.0.1:5050", "the masters' HTTP addresses, `host:port[,...]`; any master of the cluster will do")
	fs.BoolVar(&c.json, "json", false, "print JSON instead of a table")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "give up on a master after this `duration`")
	addClientTLSFlag(fs, &c.tlsCA)
	addCredFlags(fs, &c.cred)
	return fs, c
}

// parseInterleaved parses flags that may come before or after the
// positional arguments (`allot logs TASK --follow`), as nomad's CLI allows.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func (c *cliFlags) client() *http.Client {
	return withCredential(newHTTPClient(c.timeout, c.tlsCA), &c.cred)
}

// state fetches the leader's /state, saying what to do when no master
// answers.
func (c *cliFlags) state() (*operator.State, error) {
	b, err := call(c.client(), c.masters, http.MethodGet, "/state", nil)
	if errors.Is(err, tlsconf.ErrTLS) {
		return nil, err // the master is there; the message says what to do
	}
	if err != nil {
		if strings.Contains(err.Error(), unauthorizedHint) {
			return nil, err // a master answered: it wants a credential
		}
		return nil, fmt.Errorf("%v\n(is a master running? start one with `allot dev`, or point --master / ALLOT_MASTER at one)", err)
	}
	var st operator.State
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("the master's /state is not what this CLI reads: %v", err)
	}
	return &st, nil
}

// readState parses a list verb's flags (no positional arguments) and
// fetches the leader's /state.
func readState(fs *flag.FlagSet, c *cliFlags, args []string) (*operator.State, error) {
	if _, err := parseInterleaved(fs, args); err != nil {
		return nil, err
	}
	return c.state()
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// runStatus prints the cluster at a glance.
func runStatus(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("status", "[flags]", "The cluster at a glance: the leading master, raft peers, the allocator's sorter,\nagent selection and mode, agents, frameworks, and each resource's total and allocation.", stderr)
	st, err := readState(fs, c, args)
	if err != nil {
		return err
	}
	var peers []master.RaftPeer
	if b, err := call(c.client(), c.masters, http.MethodGet, master.RaftPath, nil); err == nil {
		json.Unmarshal(b, &peers)
	}
	total, used := map[string]float64{}, map[string]float64{}
	active, running := 0, 0
	for _, a := range st.Slaves {
		if a.Active {
			active++
		}
		for k, v := range a.Resources {
			total[k] += v
		}
		for k, v := range a.Used {
			used[k] += v
		}
	}
	for _, f := range st.Frameworks {
		running += len(f.Tasks)
	}
	if c.json {
		return printJSON(stdout, map[string]any{"leader": st.Leader, "version": st.AllotVersion, "mesos_version": st.Version, "raft_peers": peers, "allocator": st.Allocator,
			"agents": len(st.Slaves), "agents_active": active, "frameworks": len(st.Frameworks), "tasks_active": running, "total": total, "allocated": used})
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Leader\t%s (allot %s, Mesos API %s)\n", strings.TrimPrefix(st.Leader, "master@"), st.AllotVersion, st.Version)
	for _, p := range peers {
		role := "follower"
		if p.Leader {
			role = "leader"
		}
		fmt.Fprintf(tw, "Raft peer\t%s (raft %s, %s, %s)\n", p.ID, p.Address, strings.ToLower(p.Suffrage), role)
	}
	fmt.Fprintf(tw, "Allocator\tsorter %s, agent selection %s, mode %s\n", st.Allocator.Sorter, st.Allocator.AgentSelection, st.Allocator.Mode)
	fmt.Fprintf(tw, "Agents\t%d (%d active)\n", len(st.Slaves), active)
	fmt.Fprintf(tw, "Frameworks\t%d\n", len(st.Frameworks))
	fmt.Fprintf(tw, "Active tasks\t%d\n", running)
	tw.Flush()
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tALLOCATED\tTOTAL\tUSE")
	for _, k := range sortedResourceNames(total) {
		pct := 0.0
		if total[k] > 0 {
			pct = 100 * used[k] / total[k]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.0f%%\n", k, fmtQty(k, used[k]), fmtQty(k, total[k]), pct)
	}
	return tw.Flush()
}

// sortedResourceNames puts cpus, mem, disk first, then the rest by name.
func sortedResourceNames(m map[string]float64) []string {
	rank := map[string]int{"cpus": 0, "mem": 1, "disk": 2, "gpus": 3}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		ri, oki := rank[out[i]]
		rj, okj := rank[out[j]]
		switch {
		case oki && okj:
			return ri < rj
		case oki != okj:
			return oki
		}
		return out[i] < out[j]
	})
	return out
}

// fmtQty prints a quantity in the unit people read it in.
func fmtQty(name string, v float64) string {
	switch name {
	case "mem", "disk":
		if v >= 1024 {
			return fmt.Sprintf("%.1f GB", v/1024)
		}
		return fmt.Sprintf("%.0f MB", v)
	case "disk_bw", "net_bw":
		return fmt.Sprintf("%.0f MB/s", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// usedOf prints "used/total" for one resource.
func usedOf(name string, used, total map[string]float64) string {
	if total[name] == 0 {
		return "-"
	}
	return fmtQty(name, used[name]) + " / " + fmtQty(name, total[name])
}

// runAgents lists the agents.
func runAgents(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("agents", "[flags]", "List the agents: allocated over total cpus, mem, disk and gpus, measured CPU use and I/O wait, active tasks.", stderr)
	addFullIDsFlag(fs, &c.fullIDs)
	st, err := readState(fs, c, args)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(stdout, st.Slaves)
	}
	tasks := map[string]int{}
	for _, f := range st.Frameworks {
		for _, t := range f.Tasks {
			tasks[t.SlaveID]++
		}
	}
	ids := statePrinter(st, c.fullIDs)
	tb := newTable(stdout, "ID", "ADDRESS", "STATE", "CPUS", "MEM", "DISK", "GPUS", "CPU USE", "IOWAIT", "TASKS")
	for _, a := range st.Slaves {
		state, cpu, iowait := a.State, "-", "-"
		if state == "" { // a master older than agent states
			state = map[bool]string{true: "active", false: "disconnected"}[a.Active]
		}
		if a.Rates != nil && a.Rates.CPUMeasured {
			cpu, iowait = fmt.Sprintf("%.0f%%", 100*a.Rates.CPU), fmt.Sprintf("%.0f%%", 100*a.Rates.IOWait)
		}
		tb.row(ids.id(kindAgent, a.ID), strings.TrimPrefix(a.PID, "slave(1)@"), state,
			usedOf("cpus", a.Used, a.Resources), usedOf("mem", a.Used, a.Resources), usedOf("disk", a.Used, a.Resources),
			usedOf("gpus", a.Used, a.Resources), cpu, iowait, strconv.Itoa(tasks[a.ID]))
	}
	return tb.flush()
}

// runFrameworks lists the frameworks.
func runFrameworks(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("frameworks", "[--completed] [flags]", "List the frameworks: role, state, active and finished tasks, offers outstanding, allocation.\nWith --completed, the frameworks that ended and whose tasks the master keeps.", stderr)
	completed := fs.Bool("completed", false, "list the completed frameworks instead: name, role, how their tasks ended, when")
	addFullIDsFlag(fs, &c.fullIDs)
	st, err := readState(fs, c, args)
	if err != nil {
		return err
	}
	if *completed {
		return printCompletedFrameworks(st, c, stdout)
	}
	if c.json {
		return printJSON(stdout, st.Frameworks)
	}
	ids := statePrinter(st, c.fullIDs)
	tb := newTable(stdout, "ID", "NAME", "ROLE", "STATE", "TASKS", "DONE", "OFFERS", "CPUS", "MEM", "JOB TYPE")
	for _, f := range st.Frameworks {
		state := "active"
		switch {
		case !f.Connected:
			state = "disconnected"
		case !f.Active:
			state = "suppressed"
		}
		tb.row(ids.id(kindFramework, f.ID), f.Name, f.Role, state, strconv.Itoa(len(f.Tasks)), strconv.Itoa(len(f.CompletedTasks)), strconv.Itoa(f.OfferCount),
			fmtQty("cpus", f.UsedResources["cpus"]), fmtQty("mem", f.UsedResources["mem"]), orDash(f.JobType))
	}
	return tb.flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// allTasks lists every task the master knows, active first.
func allTasks(st *operator.State) []operator.Task {
	var out []operator.Task
	for _, f := range st.Frameworks {
		out = append(out, f.Tasks...)
		out = append(out, f.UnreachableTasks...)
	}
	for _, f := range append(st.Frameworks, st.CompletedFrameworks...) {
		out = append(out, f.CompletedTasks...)
	}
	return out
}

// normState accepts "running", "TASK_RUNNING" or "task_running".
func normState(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if !strings.HasPrefix(s, "TASK_") {
		s = "TASK_" + s
	}
	return s
}

// runTasks lists tasks, optionally of one framework or in one state.
func runTasks(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("tasks", "[--framework ID] [--state S] [flags]", "List tasks, active and finished: id, name, framework, agent, state, when it started and\nended, and why it ended (allot task TASK prints its whole state history).", stderr)
	var fw, state string
	fs.StringVar(&fw, "framework", "", "only the tasks of framework `ID` (its short form, or any unique end or beginning, will do)")
	fs.StringVar(&state, "state", "", "only tasks in state `S` (running, finished, failed, ... or TASK_RUNNING)")
	addFullIDsFlag(fs, &c.fullIDs)
	if _, err := parseInterleaved(fs, args); err != nil {
		return err
	}
	if state != "" {
		if _, ok := mesos.TaskState_value[normState(state)]; !ok {
			return usagef("--state %q is not a task state (try running, staging, finished, failed, killed, lost)", state)
		}
	}
	st, err := c.state()
	if err != nil {
		return err
	}
	if fw != "" {
		if fw, err = resolveID(kindFramework, fw, knownIDs(st, kindFramework)); err != nil {
			return err
		}
	}
	var rows []operator.Task
	for _, t := range allTasks(st) {
		if (fw == "" || t.FrameworkID == fw) && (state == "" || t.State == normState(state)) {
			rows = append(rows, t)
		}
	}
	if c.json {
		if rows == nil {
			rows = []operator.Task{}
		}
		return printJSON(stdout, rows)
	}
	ids := statePrinter(st, c.fullIDs)
	tb := newTable(stdout, "ID", "NAME", "FRAMEWORK", "AGENT", "STATE", "CPUS", "MEM", "STARTED", "ENDED", "REASON")
	for _, t := range rows {
		start, end := taskTimes(t) // history.go
		tb.row(ids.id(kindTask, t.ID), orDash(t.Name), ids.id(kindFramework, t.FrameworkID), ids.id(kindAgent, t.SlaveID), strings.TrimPrefix(t.State, "TASK_"),
			fmtQty("cpus", t.Resources["cpus"]), fmtQty("mem", t.Resources["mem"]), fmtStamp(start), fmtStamp(end), reasonOf(t))
	}
	return tb.flush()
}

// resolveID finds id among known: exactly, as a short form (a unique
// suffix, what the UI and the CLI's tables show) or as a unique prefix;
// else an error naming the closest id.
func resolveID(kind, id string, known []string) (string, error) {
	full, ok, err := shortid.Resolve(kind, id, known)
	if ok || err != nil {
		return full, err
	}
	if best := closest(id, known); best != "" {
		return "", fmt.Errorf("no %s %q; did you mean %q?", kind, id, best)
	}
	return "", fmt.Errorf("no %s %q (the master knows none)", kind, id)
}

// closest is the short form (what the tables print, shortid.Short) of the
// known id nearest to id by edit distance, measured against both the
// whole id and its short form: a mistyped short form is near the short
// form, a mistyped whole id near the whole one, and either way the short
// form is the one to type.
func closest(id string, known []string) string {
	best, bestD := "", -1
	for _, k := range known {
		short := shortid.Short(k, known)
		d := min(editDistance(id, k), editDistance(id, short))
		if bestD < 0 || d < bestD {
			best, bestD = short, d
		}
	}
	return best
}

// editDistance is Levenshtein's distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// runExplain prints the allocator's reason for a framework and an agent,
// or, for a framework alone, why it was offered nothing lately.
func runExplain(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("explain", "FRAMEWORK [AGENT] [flags]", "Why the allocator would or would not offer AGENT's resources to FRAMEWORK in the next\ncycle: inactive, suppressed, demand met, a decline filter (until when), the task does not\nfit, or eligible and ordered by the sorter's score. Without AGENT: why FRAMEWORK was\noffered nothing lately, by resource and agent count (its task is larger than every agent,\nno agent has it free, its role's quota limit, filters). Ids in their short form (or any unique end or beginning) will do.", stderr)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 && len(pos) != 2 {
		return usagef("usage: allot explain FRAMEWORK [AGENT] (allot frameworks and allot agents list the ids)")
	}
	st, err := c.state()
	if err != nil {
		return err
	}
	fw, err := resolveID(kindFramework, pos[0], frameworkIDs(st, false))
	if err != nil {
		// The allocator explains only the frameworks it serves; an ended
		// one is kept, and listed, elsewhere.
		if done, ok, _ := shortid.Resolve(kindFramework, pos[0], frameworkIDs(st, true)); ok {
			return fmt.Errorf("framework %s has ended: nothing to explain (allot frameworks --completed and allot tasks --framework list what it ran)", done)
		}
		return err
	}
	if len(pos) == 1 {
		return explainFramework(c, fw, stdout)
	}
	ag, err := resolveID(kindAgent, pos[1], knownIDs(st, kindAgent))
	if err != nil {
		return err
	}
	b, err := call(c.client(), c.masters, http.MethodGet, "/explain?"+url.Values{"framework_id": {fw}, "agent_id": {ag}}.Encode(), nil)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(stdout, map[string]string{"framework_id": fw, "agent_id": ag, "explanation": strings.TrimSpace(string(b))})
	}
	fmt.Fprint(stdout, humanize(string(b)))
	return nil
}

// isTerminalName says whether a /state task state name is terminal.
func isTerminalName(s string) bool {
	v, ok := mesos.TaskState_value[s]
	return ok && taskstate.IsTerminal(mesos.TaskState(v))
}
