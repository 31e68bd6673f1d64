package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	gogotypes "github.com/gogo/protobuf/types"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaint "github.com/mesos/mesos-go/api/v1/lib/maintenance"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"
)

// Maintenance and drain from the command line: `allot agent
// drain|deactivate|reactivate AGENT` and `allot maintenance
// schedule|status|start|stop`, each one operator call (Mesos's
// DRAIN_AGENT, DEACTIVATE_AGENT, REACTIVATE_AGENT,
// UPDATE_/GET_MAINTENANCE_SCHEDULE, GET_MAINTENANCE_STATUS,
// START_/STOP_MAINTENANCE) to the leader's /api/v1.

func init() {
	register(command{name: "maintenance", summary: "maintenance windows: schedule [FILE], status, start|stop MACHINE... (machines DRAINING, DOWN, UP)", run: runMaintenance})
}

// agentVerbs are the `allot agent` verbs that act on a running agent
// rather than run one.
var agentVerbs = map[string]bool{"drain": true, "deactivate": true, "reactivate": true}

// operatorCall posts call to the leader's operator API and decodes the
// answer (nil when the call answers none).
func (c *cliFlags) operatorCall(oc *mmaster.Call) (*mmaster.Response, error) {
	body, err := json.Marshal(oc)
	if err != nil {
		return nil, err
	}
	b, err := call(c.client(), c.masters, http.MethodPost, "/api/v1", body)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return nil, err
	}
	var resp mmaster.Response
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, fmt.Errorf("the master's answer to %s is not what this CLI reads: %v", oc.Type, err)
	}
	return &resp, nil
}

// runAgentVerb is `allot agent drain|deactivate|reactivate AGENT`.
func runAgentVerb(args []string, stdout, stderr io.Writer) error {
	verb := args[0]
	fs, c := newCLIFlags("agent "+verb, "AGENT [flags]", "Drain, deactivate or reactivate an agent (AGENT: its id, its short form, or any unique end or beginning).\n"+
		"drain kills its tasks with their kill policy and offers nothing of it; it is DRAINED once they are over.\n"+
		"deactivate offers nothing of it and leaves its tasks running; reactivate offers it again.", stderr)
	grace := fs.Duration("max-grace-period", -1, "drain: cap each task's kill grace period at this `duration` (default: the task's own kill policy)")
	gone := fs.Bool("mark-gone", false, "drain: remove the agent for good once drained (its id is refused afterwards)")
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: allot agent %s AGENT [flags]", verb)
	}
	id, err := c.resolve(kindAgent, pos[0])
	if err != nil {
		return err
	}
	aid := mesos.AgentID{Value: id}
	var call mmaster.Call
	switch verb {
	case "drain":
		call = mmaster.Call{Type: mmaster.Call_DRAIN_AGENT, DrainAgent: &mmaster.Call_DrainAgent{AgentID: aid, MarkGone: gone}}
		if *grace >= 0 {
			call.DrainAgent.MaxGracePeriod = gogotypes.DurationProto(*grace)
		}
	case "deactivate":
		call = mmaster.Call{Type: mmaster.Call_DEACTIVATE_AGENT, DeactivateAgent: &mmaster.Call_DeactivateAgent{AgentID: aid}}
	default:
		call = mmaster.Call{Type: mmaster.Call_REACTIVATE_AGENT, ReactivateAgent: &mmaster.Call_ReactivateAgent{AgentID: aid}}
	}
	if _, err := c.operatorCall(&call); err != nil {
		return err
	}
	if c.json {
		return printJSON(stdout, map[string]string{"agent_id": id, "call": call.Type.String()})
	}
	fmt.Fprintf(stdout, "%s: %s done; `allot agents` shows its state\n", id, call.Type)
	return nil
}

const maintenanceUsage = `usage: allot maintenance schedule [FILE|-]   (no FILE: print the schedule; FILE: replace it with FILE's JSON)
       allot maintenance status
       allot maintenance start MACHINE...        (DRAINING -> DOWN: the machines' agents are removed)
       allot maintenance stop MACHINE...         (DOWN -> UP: the machines leave the schedule)
   MACHINE is HOSTNAME, HOSTNAME/IP or /IP, as in the schedule`

// runMaintenance is `allot maintenance VERB`.
func runMaintenance(args []string, stdout, stderr io.Writer) error {
	if len(args) < 1 {
		return usagef("%s", maintenanceUsage)
	}
	verb := args[0]
	fs, c := newCLIFlags("maintenance "+verb, "[args] [flags]", maintenanceUsage, stderr)
	pos, err := parseInterleaved(fs, args[1:])
	if err != nil {
		return err
	}
	switch verb {
	case "schedule":
		return maintenanceSchedule(c, pos, stdout)
	case "status":
		resp, err := c.operatorCall(&mmaster.Call{Type: mmaster.Call_GET_MAINTENANCE_STATUS})
		if err != nil {
			return err
		}
		return printMaintenanceStatus(stdout, c.json, resp.GetGetMaintenanceStatus().Status)
	case "start", "stop":
		if len(pos) == 0 {
			return usagef("%s", maintenanceUsage)
		}
		var ids []mesos.MachineID
		for _, p := range pos {
			ids = append(ids, parseMachine(p))
		}
		call := &mmaster.Call{Type: mmaster.Call_START_MAINTENANCE, StartMaintenance: &mmaster.Call_StartMaintenance{Machines: ids}}
		if verb == "stop" {
			call = &mmaster.Call{Type: mmaster.Call_STOP_MAINTENANCE, StopMaintenance: &mmaster.Call_StopMaintenance{Machines: ids}}
		}
		if _, err := c.operatorCall(call); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %d machine(s)\n", call.Type, len(ids))
		return nil
	}
	return usagef("%s", maintenanceUsage)
}

// parseMachine reads HOSTNAME, HOSTNAME/IP or /IP.
func parseMachine(s string) mesos.MachineID {
	host, ip, _ := strings.Cut(s, "/")
	var id mesos.MachineID
	if host != "" {
		id.Hostname = &host
	}
	if ip != "" {
		id.IP = &ip
	}
	return id
}

// maintenanceSchedule prints the schedule, or replaces it with a file's
// (a maintenance.Schedule in Mesos's JSON; "-" reads standard input).
func maintenanceSchedule(c *cliFlags, pos []string, stdout io.Writer) error {
	if len(pos) == 0 {
		resp, err := c.operatorCall(&mmaster.Call{Type: mmaster.Call_GET_MAINTENANCE_SCHEDULE})
		if err != nil {
			return err
		}
		s := resp.GetGetMaintenanceSchedule().Schedule
		if c.json {
			return printJSON(stdout, s)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "MACHINE\tSTART\tDURATION")
		for _, w := range s.Windows {
			start := time.Unix(0, w.Unavailability.Start.Nanoseconds).UTC().Format(time.RFC3339)
			dur := "-"
			if d := w.Unavailability.Duration; d != nil {
				dur = time.Duration(d.Nanoseconds).String()
			}
			for _, id := range w.MachineIDs {
				fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", id.GetHostname(), id.GetIP(), start, dur)
			}
		}
		return tw.Flush()
	}
	var b []byte
	var err error
	if pos[0] == "-" {
		b, err = io.ReadAll(os.Stdin)
	} else {
		b, err = os.ReadFile(pos[0])
	}
	if err != nil {
		return err
	}
	var s mmaint.Schedule
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s: not a maintenance schedule ({\"windows\": [...]}): %v", pos[0], err)
	}
	if _, err := c.operatorCall(&mmaster.Call{Type: mmaster.Call_UPDATE_MAINTENANCE_SCHEDULE,
		UpdateMaintenanceSchedule: &mmaster.Call_UpdateMaintenanceSchedule{Schedule: s}}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "schedule updated: %d window(s)\n", len(s.Windows))
	return nil
}

// printMaintenanceStatus prints the DRAINING and DOWN machines and the
// frameworks' answers to their inverse offers.
func printMaintenanceStatus(w io.Writer, asJSON bool, st mmaint.ClusterStatus) error {
	if asJSON {
		return printJSON(w, st)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MACHINE\tMODE\tFRAMEWORK\tANSWER")
	for _, dm := range st.DrainingMachines {
		name := dm.ID.GetHostname() + "/" + dm.ID.GetIP()
		if len(dm.Statuses) == 0 {
			fmt.Fprintf(tw, "%s\tDRAINING\t-\t-\n", name)
		}
		for _, s := range dm.Statuses {
			fmt.Fprintf(tw, "%s\tDRAINING\t%s\t%s\n", name, s.FrameworkID.Value, s.GetStatus())
		}
	}
	for _, id := range st.DownMachines {
		fmt.Fprintf(tw, "%s/%s\tDOWN\t-\t-\n", id.GetHostname(), id.GetIP())
	}
	return tw.Flush()
}
