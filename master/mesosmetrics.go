package master

import (
	"net/http"
	"sort"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/resources"
)

// /metrics/snapshot: the master's metrics under Mesos's names
// (master/cpus_total, master/tasks_running, ...), one flat JSON object, as
// Mesos's metrics endpoint serves them; GET_METRICS reports the same names
// beside allot's Prometheus series. Only what allot has the data for is
// there: the gauges of live state, and the counters allot keeps, Mesos's
// lifetime task counters (master/tasks_finished, ..., taskcounters.go)
// among them. Its message counters are not (docs/mesos-compat.md).

// snapshotTaskStates are the states whose master/tasks_<state> gauge
// counts the tasks in that state now.
var snapshotTaskStates = []mesos.TaskState{mesos.TASK_STAGING, mesos.TASK_STARTING, mesos.TASK_RUNNING,
	mesos.TASK_KILLING, mesos.TASK_UNREACHABLE}

// mesosSnapshot reads the master/... metrics. Takes m.mu.
func (m *Master) mesosSnapshot() map[string]float64 {
	out := m.counterMetrics()
	m.mu.Lock()
	defer m.mu.Unlock()
	out["master/uptime_secs"] = m.clock.Now().Sub(m.start).Seconds()
	out["master/elected"] = boolMetric(m.leader.Load())
	var conn, disc float64
	var total resources.Resources
	for _, a := range m.agents {
		total = total.Add(a.total)
		if a.stream != nil {
			conn++
		} else {
			disc++
		}
	}
	out["master/slaves_active"], out["master/slaves_inactive"] = conn, disc
	out["master/slaves_connected"], out["master/slaves_disconnected"] = conn, disc
	var used resources.Resources
	for _, a := range m.agents {
		for _, r := range a.executors {
			used = used.Add(r)
		}
	}
	conn, disc = 0, 0
	states := map[mesos.TaskState]float64{}
	for _, fw := range m.frameworks {
		if fw.stream != nil {
			conn++
		} else {
			disc++
		}
		for _, t := range fw.tasks {
			if !taskstate.IsTerminal(t.state) {
				states[t.state]++
				used = used.Add(t.res)
			}
		}
	}
	out["master/frameworks_active"], out["master/frameworks_inactive"] = conn, disc
	out["master/frameworks_connected"], out["master/frameworks_disconnected"] = conn, disc
	for _, s := range snapshotTaskStates {
		out["master/tasks_"+strings.ToLower(strings.TrimPrefix(s.String(), "TASK_"))] = states[s]
	}
	for _, kind := range []string{"cpus", "mem", "disk", "gpus"} {
		t, u := total.Scalar(kind).Units(), used.Scalar(kind).Units()
		out["master/"+kind+"_total"], out["master/"+kind+"_used"], out["master/"+kind+"_percent"] = t, u, 0
		if t > 0 {
			out["master/"+kind+"_percent"] = u / t
		}
	}
	out["master/outstanding_offers"] = float64(len(m.offers))
	out["master/operator_event_stream_subscribers"] = float64(len(m.opSubs))
	return out
}

// counterMetrics is the Mesos-named counters read from allot's Prometheus
// counters.
func (m *Master) counterMetrics() map[string]float64 {
	out := map[string]float64{"master/valid_status_updates": 0, "master/invalid_status_updates": 0, "master/messages_launch_tasks": 0}
	for _, st := range endedTaskStates {
		out[snapshotName("master", st)] = 0
	}
	mfs, err := m.m.reg.Gather()
	if err != nil {
		return out
	}
	var updates float64
	for _, mf := range mfs {
		for _, mm := range mf.Metric {
			v := mm.GetCounter().GetValue()
			switch mf.GetName() {
			case "allot_master_status_updates_total":
				updates += v
			case "allot_master_invalid_status_updates_total":
				out["master/invalid_status_updates"] = v
			case "allot_master_tasks_launched_total":
				out["master/messages_launch_tasks"] = v
			case tasksEndedName:
				for _, l := range mm.GetLabel() {
					if name, n, ok := taskEndSnapshot(l.GetValue(), v); ok && l.GetName() == "state" {
						out[name] = n
					}
				}
			}
		}
	}
	// Every update is counted as it arrives; the invalid ones among them
	// are counted again on their own.
	out["master/valid_status_updates"] = max(0, updates-out["master/invalid_status_updates"])
	return out
}

func boolMetric(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// snapshotMetricList is mesosSnapshot as GET_METRICS lists it, by name.
func (m *Master) snapshotMetricList() []mesos.Metric {
	snap := m.mesosSnapshot()
	names := make([]string, 0, len(snap))
	for k := range snap {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]mesos.Metric, 0, len(names))
	for _, k := range names {
		v := snap[k]
		out = append(out, mesos.Metric{Name: k, Value: &v})
	}
	return out
}

// handleMetricsSnapshot serves /metrics/snapshot.
func (m *Master) handleMetricsSnapshot(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, m.mesosSnapshot())
}
