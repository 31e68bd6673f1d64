package registry

import (
	"bytes"
	"io"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
)

// A removed framework's record is kept while its completed tasks are, and
// a snapshot carries it to a restored registry: completed frameworks keep
// their names on every replica and after a restore.
func TestRegistryKeepsCompletedFrameworkRecords(t *testing.T) {
	fw := func(id string) *api.Command {
		info, _ := (&mesos.FrameworkInfo{Name: "name-" + id}).Marshal()
		return &api.Command{Type: api.CommandType_FRAMEWORK_UPSERT, Framework: &api.FrameworkRecord{Id: id, Info: info}}
	}
	complete := func(id string) *api.Command {
		return &api.Command{Type: api.CommandType_TASK_COMPLETE, Task: &api.TaskRecord{FrameworkId: id, TaskId: "t", State: int32(mesos.TASK_FINISHED),
			Statuses: [][]byte{[]byte("running"), []byte("finished")}}}
	}
	remove := func(id string) *api.Command {
		return &api.Command{Type: api.CommandType_FRAMEWORK_REMOVE, Id: id, Limit: 2}
	}
	tests := []struct {
		name string
		cmds []*api.Command
		ids  []string
		want string // id:name of each of ids' kept record ("id:" for none)
	}{
		{"kept with its tasks", []*api.Command{fw("a"), complete("a"), remove("a")}, []string{"a"}, "a:name-a"},
		{"none without tasks", []*api.Command{fw("a"), remove("a")}, []string{"a"}, "a:"},
		{"a live framework has none", []*api.Command{fw("a"), complete("a")}, []string{"a"}, "a:"},
		{"trimmed with its tasks", []*api.Command{fw("a"), fw("b"), fw("c"), complete("a"), complete("b"), complete("c"), remove("a"), remove("b"), remove("c")},
			[]string{"a", "b", "c"}, "a: b:name-b c:name-c"},
	}
	names := func(r *Registry, ids ...string) string {
		var out []string
		for _, id := range ids {
			var info mesos.FrameworkInfo
			if rec := r.CompletedFramework(id); rec != nil {
				info.Unmarshal(rec.Info)
			}
			out = append(out, id+":"+info.Name)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRegistry()
			applyAll(t, r, tc.cmds)
			if got := names(r, tc.ids...); got != tc.want {
				t.Errorf("completed frameworks %q, want %q", got, tc.want)
			}
			var snap bytes.Buffer
			if err := r.WriteSnapshot(&snap); err != nil {
				t.Fatal(err)
			}
			restored := NewRegistry()
			if err := restored.Restore(io.NopCloser(bytes.NewReader(snap.Bytes()))); err != nil {
				t.Fatal(err)
			}
			if got := names(restored, tc.ids...); got != tc.want {
				t.Errorf("after a snapshot restore %q, want %q", got, tc.want)
			}
			for _, tk := range restored.CompletedTasks() {
				if len(tk.Statuses) != 2 {
					t.Errorf("restored task %s/%s has %d statuses, want 2", tk.FrameworkId, tk.TaskId, len(tk.Statuses))
				}
			}
		})
	}
}
