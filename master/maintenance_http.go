package master

import (
	"encoding/json"
	"io"
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaint "github.com/mesos/mesos-go/api/v1/lib/maintenance"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// Mesos's maintenance endpoints, each the operator call it stands for
// (maintenance.go), authorized and answered the same:
//
//	GET  /maintenance/schedule   GET_MAINTENANCE_SCHEDULE: the schedule's JSON
//	POST /maintenance/schedule   UPDATE_MAINTENANCE_SCHEDULE: body a schedule's JSON
//	GET  /maintenance/status     GET_MAINTENANCE_STATUS: the ClusterStatus JSON
//	POST /machine/down           START_MAINTENANCE: body a JSON list of MachineIDs
//	POST /machine/up             STOP_MAINTENANCE: the same
//
// and each again under /master/. Bodies are bounded by the master's
// request limit (limits.go) like every other.

// maintenanceRoutes are the endpoints' rows of the route table.
func (m *Master) maintenanceRoutes() []route {
	get, post := http.MethodGet, http.MethodPost
	lo := func(h http.HandlerFunc) http.Handler { return m.leaderOnly(h) }
	var out []route
	for _, prefix := range []string{"", "/master"} {
		out = append(out,
			route{method: get, path: prefix + "/maintenance/schedule", class: classReadOnly, handler: lo(m.handleMaintenanceSchedule)},
			route{method: post, path: prefix + "/maintenance/schedule", class: classReadWrite, handler: lo(m.handleMaintenanceSchedule)},
			route{method: get, path: prefix + "/maintenance/status", class: classReadOnly, handler: lo(m.handleMaintenanceStatus)},
			route{method: post, path: prefix + "/machine/down", class: classReadWrite, handler: lo(m.handleMachines(mmaster.Call_START_MAINTENANCE))},
			route{method: post, path: prefix + "/machine/up", class: classReadWrite, handler: lo(m.handleMachines(mmaster.Call_STOP_MAINTENANCE))})
	}
	return out
}

// serveMaintenanceCall answers call for the request's caller: the
// response's JSON if it has one, else 200 with no body.
func (m *Master) serveMaintenanceCall(w http.ResponseWriter, r *http.Request, call *mmaster.Call, body func(*mmaster.Response) any) {
	resp, err := m.maintenanceCallAs(auth.SubjectFrom(r.Context()), call)
	if err != nil {
		api.WriteError(w, err)
		return
	}
	if body == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body(resp))
}

// decodeBody reads the request's JSON into v, 400 naming what is wrong.
func decodeBody(r *http.Request, v any, what string) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return api.Errorf(http.StatusBadRequest, "reading the body: %v", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return api.Errorf(http.StatusBadRequest, "the body is not %s: %v", what, err)
	}
	return nil
}

func (m *Master) handleMaintenanceSchedule(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		m.serveMaintenanceCall(w, r, &mmaster.Call{Type: mmaster.Call_GET_MAINTENANCE_SCHEDULE},
			func(resp *mmaster.Response) any {
				if len(resp.GetMaintenanceSchedule.Schedule.Windows) == 0 {
					return struct{}{} // Mesos writes no empty list: {}
				}
				return resp.GetMaintenanceSchedule.Schedule
			})
		return
	}
	var s mmaint.Schedule
	if err := decodeBody(r, &s, `a maintenance schedule ({"windows": [...]})`); err != nil {
		api.WriteError(w, err)
		return
	}
	m.serveMaintenanceCall(w, r, &mmaster.Call{Type: mmaster.Call_UPDATE_MAINTENANCE_SCHEDULE,
		UpdateMaintenanceSchedule: &mmaster.Call_UpdateMaintenanceSchedule{Schedule: s}}, nil)
}

func (m *Master) handleMaintenanceStatus(w http.ResponseWriter, r *http.Request) {
	m.serveMaintenanceCall(w, r, &mmaster.Call{Type: mmaster.Call_GET_MAINTENANCE_STATUS},
		func(resp *mmaster.Response) any { return resp.GetMaintenanceStatus.Status })
}

// handleMachines serves /machine/down (START_MAINTENANCE) and /machine/up
// (STOP_MAINTENANCE).
func (m *Master) handleMachines(t mmaster.Call_Type) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var ids []mesos.MachineID
		if err := decodeBody(r, &ids, `a list of machines ([{"hostname": ..., "ip": ...}])`); err != nil {
			api.WriteError(w, err)
			return
		}
		call := &mmaster.Call{Type: t, StartMaintenance: &mmaster.Call_StartMaintenance{Machines: ids}}
		if t == mmaster.Call_STOP_MAINTENANCE {
			call = &mmaster.Call{Type: t, StopMaintenance: &mmaster.Call_StopMaintenance{Machines: ids}}
		}
		m.serveMaintenanceCall(w, r, call, nil)
	}
}
