package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/master"
)

// mid is a master's id: every id the master issues starts with it.
const mid = "0c3f6a9e-5b1d-4c7e-9a2f-3d8e1b6c4a70"

// idsMaster is a /state whose ids are the master's, alike but for their
// ends: frameworks -0001 and -0011 (live) and -0002 (completed), agents
// -S1 and -S11, tasks allot-run-...001 and ...011. It records the action
// calls it gets; a killed task ends TASK_KILLED.
type idsMaster struct {
	mu     sync.Mutex
	calls  []string
	killed string // the task id killed
}

func (m *idsMaster) state() operator.State {
	task := func(id, fw, agent, state string) operator.Task {
		if id == m.killed {
			state = "TASK_KILLED"
		}
		return operator.Task{ID: id, Name: "sleep", FrameworkID: fw, SlaveID: agent, State: state}
	}
	return operator.State{
		Slaves: []operator.Agent{{ID: mid + "-S1", Active: true}, {ID: mid + "-S11", Active: true}},
		Frameworks: []operator.Framework{
			{ID: mid + "-0001", Name: "one", Tasks: []operator.Task{task("allot-run-1764263387000000001", mid+"-0001", mid+"-S1", "TASK_RUNNING")}},
			{ID: mid + "-0011", Name: "eleven", Tasks: []operator.Task{task("allot-run-1764263387000000011", mid+"-0011", mid+"-S11", "TASK_RUNNING")}},
		},
		CompletedFrameworks: []operator.Framework{{ID: mid + "-0002", Name: "two", CompletedTasks: []operator.Task{task("web-1", mid+"-0002", mid+"-S1", "TASK_FINISHED")}}},
	}
}

func (m *idsMaster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch r.URL.Path {
	case "/state":
		json.NewEncoder(w).Encode(m.state())
	case "/explain":
		m.calls = append(m.calls, r.URL.RawQuery)
		io.WriteString(w, "eligible\n")
	case master.KillPath, "/api/v1":
		b, _ := io.ReadAll(r.Body)
		m.calls = append(m.calls, string(b))
		var kill master.KillRequest
		if r.URL.Path == master.KillPath && json.Unmarshal(b, &kill) == nil {
			m.killed = kill.TaskID
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}

// The tables print each id's short form (its shortest end that no other id
// of its kind has), --full-ids the whole id.
func TestTablesPrintShortIDs(t *testing.T) {
	tests := []struct {
		args      []string
		want, not []string
	}{
		{[]string{"agents"}, []string{"\nc4a70-S1 ", "\n4a70-S11 "}, []string{mid}},
		{[]string{"frameworks"}, []string{"\na70-0001  one", "\na70-0011  eleven"}, []string{mid}},
		{[]string{"frameworks", "--completed"}, []string{"\na70-0002  two"}, []string{mid}},
		{[]string{"tasks"}, []string{"\n00000001  sleep  a70-0001   c4a70-S1  RUNNING", "\n00000011  sleep  a70-0011   4a70-S11  RUNNING", "\nweb-1"}, []string{mid, "allot-run"}},
		{[]string{"tasks", "--full-ids"}, []string{"allot-run-1764263387000000001", mid + "-0001", mid + "-S11"}, nil},
		{[]string{"agents", "--full-ids"}, []string{mid + "-S1 "}, nil},
		{[]string{"frameworks", "--completed", "--full-ids"}, []string{mid + "-0002"}, nil},
		// One task's page is where ids are copied from: whole.
		{[]string{"task", "00000011"}, []string{"allot-run-1764263387000000011", mid + "-0011", mid + "-S11"}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, err := runAgainst(t, &idsMaster{}, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("output has %q:\n%s", n, out)
				}
			}
		})
	}
}

// Every verb that takes an id takes its short form, any unique end or
// beginning; an ambiguous one is an error that lists the candidates, an
// unknown one names the closest id.
func TestVerbsResolveIDs(t *testing.T) {
	tests := []struct {
		args []string
		want string // in the action the master got, or in the error
		err  bool
	}{
		{args: []string{"kill", "00000011"}, want: `"task_id":"allot-run-1764263387000000011"`},
		{args: []string{"kill", "allot-run-1764263387000000001", "--framework", "a70-0001"}, want: `"framework_id":"` + mid + `-0001"`},
		{args: []string{"kill", "1"}, err: true, want: "ambiguous: it could be allot-run-1764263387000000001, allot-run-1764263387000000011"},
		{args: []string{"kill", "allot-run"}, err: true, want: "ambiguous"},
		{args: []string{"kill", "no-such-task"}, err: true, want: `no task "no-such-task"; did you mean`},
		{args: []string{"teardown", "a70-0011"}, want: `"value":"` + mid + `-0011"`},
		{args: []string{"teardown", "0c3f6a9e"}, err: true, want: "framework \"0c3f6a9e\" is ambiguous: it could be " + mid + "-0001, " + mid + "-0011"},
		{args: []string{"teardown", "0009"}, err: true, want: `no framework "0009"`},
		// The suggestion is the short form the tables print, whether the
		// mistyped id was short or whole.
		{args: []string{"kill", "00000012"}, err: true, want: `no task "00000012"; did you mean "00000011"?`},
		{args: []string{"teardown", "a70-0012"}, err: true, want: `did you mean "a70-0011"?`},
		{args: []string{"teardown", mid + "-0012"}, err: true, want: `did you mean "a70-0011"?`},
		{args: []string{"explain", "0001", "S11"}, want: "agent_id=" + mid + "-S11&framework_id=" + mid + "-0001"},
		{args: []string{"explain", "0001", "1"}, err: true, want: "agent \"1\" is ambiguous"},
		{args: []string{"explain", "a70-0002"}, err: true, want: "framework " + mid + "-0002 has ended: nothing to explain (allot frameworks --completed"},
		{args: []string{"agent", "drain", "c4a70-S1"}, want: `"agent_id":{"value":"` + mid + `-S1"}`},
		{args: []string{"agent", "drain", "S2"}, err: true, want: `no agent "S2"`},
		{args: []string{"reserve", "S11", "cpus(eng):1"}, want: `"agent_id":{"value":"` + mid + `-S11"}`},
		{args: []string{"reserve", "0c3f", "cpus(eng):1"}, err: true, want: "ambiguous"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			fm := &idsMaster{}
			out, err := runAgainst(t, fm, tt.args)
			if tt.err {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, stdout %q; want an error saying %q", err, out, tt.want)
				}
				if len(fm.calls) != 0 {
					t.Errorf("the master got %q after an error", fm.calls)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(fm.calls) != 1 || !strings.Contains(fm.calls[0], tt.want) {
				t.Errorf("the master got %q, want one call with %q", fm.calls, tt.want)
			}
		})
	}
}

// runAgainst runs the CLI verb args (a verb and, for `agent`, its
// subverb) against the master h and returns its stdout.
func runAgainst(t *testing.T, h http.Handler, args []string) (string, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	var out strings.Builder
	err := commands[args[0]].run(append(args[1:], "--master", srv.Listener.Addr().String()), &out, io.Discard)
	return out.String(), err
}
