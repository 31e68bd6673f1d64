package master

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/operator"
)

// A task's state history, as Mesos's Task.statuses: every update the
// master applied to the task, oldest first, so that a finished task still
// says when it started, when it ended and why (reason, message, source).
// It travels in the task's registry record, so a newly elected leader
// shows the same history.

// maxTaskStatuses bounds a task's history: a task whose health checks
// flap would otherwise grow its record, and every replica's copy, without
// end. The first status is kept (when the task started), then the newest.
const maxTaskStatuses = 50

// setStatus makes st the task's latest status and appends it, without its
// data (as Mesos strips it: executors may put anything there), to the
// history unless it repeats the last entry (a retried update).
func (t *task) setStatus(st *mesos.TaskStatus) {
	t.status = st
	if n := len(t.statuses); n > 0 {
		last := &t.statuses[n-1]
		if last.GetState() == st.GetState() && string(last.UUID) == string(st.UUID) && last.GetTimestamp() == st.GetTimestamp() {
			return
		}
	}
	h := *st
	h.Data = nil
	t.statuses = append(t.statuses, h)
	if len(t.statuses) > maxTaskStatuses {
		t.statuses = append(t.statuses[:1], t.statuses[len(t.statuses)-maxTaskStatuses+1:]...)
	}
}

// statusesRecord encodes the history for the task's registry record.
func (t *task) statusesRecord() [][]byte {
	if len(t.statuses) == 0 {
		return nil
	}
	out := make([][]byte, 0, len(t.statuses))
	for i := range t.statuses {
		if b, err := t.statuses[i].Marshal(); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// statusesFromRecord decodes a record's history, skipping what does not
// decode.
func statusesFromRecord(list [][]byte) []mesos.TaskStatus {
	var out []mesos.TaskStatus
	for _, b := range list {
		var st mesos.TaskStatus
		if st.Unmarshal(b) == nil {
			out = append(out, st)
		}
	}
	return out
}

// stateStatuses is the history as /state writes it: Mesos's fields (state,
// timestamp) and, allot's addition, the reason, message and source, so
// that a finished task says why it ended.
func stateStatuses(list []mesos.TaskStatus) []operator.TaskStatus {
	out := make([]operator.TaskStatus, 0, len(list))
	for i := range list {
		st := &list[i]
		ts := operator.TaskStatus{State: st.GetState().String(), Timestamp: st.GetTimestamp(), Message: st.GetMessage()}
		if st.Reason != nil {
			ts.Reason = st.Reason.String()
		}
		if st.Source != nil {
			ts.Source = st.Source.String()
		}
		if st.Healthy != nil {
			h := *st.Healthy
			ts.Healthy = &h
		}
		ts.ContainerStatus = stateContainerStatus(st.ContainerStatus) // statenetwork.go
		out = append(out, ts)
	}
	return out
}
