package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/resources"
)

func init() {
	register(command{name: "reserve", summary: "reserve an agent's resources for a role: reserve AGENT 'cpus(eng):2;disk(eng):100'", run: runReserve})
	register(command{name: "unreserve", summary: "undo a dynamic reservation: unreserve AGENT 'cpus(eng):2'", run: runUnreserve})
	register(command{name: "volumes", summary: "list persistent volumes, or volumes create|destroy AGENT ROLE ID [SIZE PATH]", run: runVolumes})
}

func runReserve(args []string, stdout, stderr io.Writer) error {
	return reservationVerb("reserve", mmaster.Call_RESERVE_RESOURCES, args, stdout, stderr)
}

func runUnreserve(args []string, stdout, stderr io.Writer) error {
	return reservationVerb("unreserve", mmaster.Call_UNRESERVE_RESOURCES, args, stdout, stderr)
}

// reservationVerb sends RESERVE_RESOURCES or UNRESERVE_RESOURCES for the
// resources given in the text form with roles, each a DYNAMIC reservation
// with the principal given.
func reservationVerb(name string, t mmaster.Call_Type, args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags(name, "[flags] AGENT_ID 'cpus(ROLE):N;mem(ROLE):N;...'",
		"Send the operator call "+t.String()+" for the agent's resources given with their role,\n"+
			"each a DYNAMIC reservation whose principal is --principal (the one you authenticate as, as Mesos requires).\n"+
			"AGENT_ID's short form (or any unique end or beginning) will do.", stderr)
	pos, err := parseInterleaved(fs, args)
	principal := &c.cred.principal // Mesos holds a reservation's principal to the caller's
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("want AGENT_ID and the resources, e.g. allot %s A1 'cpus(eng):2'", name)
	}
	list, err := dynamicResources(pos[1], *principal)
	if err != nil {
		return usagef("%v", err)
	}
	id, err := c.resolve(kindAgent, pos[0])
	if err != nil {
		return err
	}
	call := mmaster.Call{Type: t}
	agent := mesos.AgentID{Value: id}
	if t == mmaster.Call_RESERVE_RESOURCES {
		call.ReserveResources = &mmaster.Call_ReserveResources{AgentID: agent, Resources: list}
	} else {
		call.UnreserveResources = &mmaster.Call_UnreserveResources{AgentID: agent, Resources: list}
	}
	if err := operatorPost(c, &call, nil); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s on agent %s\n", t, pos[1], id)
	return nil
}

// dynamicResources reads "cpus(eng):2;..." into resources each with one
// DYNAMIC reservation for its role (refinement stacks are the API's).
func dynamicResources(text, principal string) ([]mesos.Resource, error) {
	byRole, err := resources.ParseByRole(text)
	if err != nil {
		return nil, err
	}
	if r := byRole[resources.Unreserved]; !r.IsEmpty() {
		return nil, fmt.Errorf("%s has no role: write it as name(role):value", r)
	}
	list := resources.StaticMesos(byRole)
	for i := range list {
		ri := &list[i].Reservations[0]
		t := mesos.Resource_ReservationInfo_DYNAMIC
		ri.Type = &t
		if principal != "" {
			p := principal
			ri.Principal = &p
		}
	}
	return list, nil
}

// operatorPost sends an operator call as JSON; into, if not nil, gets the
// answer.
func operatorPost(c *cliFlags, call *mmaster.Call, into *mmaster.Response) error {
	body, err := json.Marshal(call)
	if err != nil {
		return err
	}
	b, err := callMaster(c, body)
	if err != nil || into == nil {
		return err
	}
	return json.Unmarshal(b, into)
}

func callMaster(c *cliFlags, body []byte) ([]byte, error) {
	return call(c.client(), c.masters, http.MethodPost, "/api/v1", body)
}

// runVolumes lists the persistent volumes of every agent (GET_AGENTS), or
// creates or destroys one.
func runVolumes(args []string, stdout, stderr io.Writer) error {
	fs, c := newCLIFlags("volumes", "[flags] [create AGENT ROLE ID SIZE PATH | destroy AGENT ROLE ID]",
		"List persistent volumes (agent, role, id, size in MB, container path, principal),\n"+
			"or create one on disk reserved for ROLE (by --principal), or destroy one. AGENT's short form\n"+
			"(or any unique end or beginning) will do.", stderr)
	addFullIDsFlag(fs, &c.fullIDs)
	pos, err := parseInterleaved(fs, args)
	principal := &c.cred.principal // the volume's and its reservation's principal
	if err != nil {
		return err
	}
	var resp mmaster.Response
	if err := operatorPost(c, &mmaster.Call{Type: mmaster.Call_GET_AGENTS}, &resp); err != nil {
		return err
	}
	var agents []string
	for _, a := range resp.GetGetAgents().GetAgents() {
		agents = append(agents, a.AgentInfo.GetID().GetValue())
	}
	if len(pos) == 0 {
		ids := idPrinter{full: c.fullIDs, known: map[string][]string{kindAgent: agents}}
		return printVolumes(stdout, c.json, ids, resp.GetGetAgents())
	}
	if len(pos) > 1 && (pos[0] == "create" || pos[0] == "destroy") {
		if pos[1], err = resolveID(kindAgent, pos[1], agents); err != nil {
			return err
		}
	}
	return volumeChange(c, pos, *principal, resp.GetGetAgents(), stdout)
}

// volumeChange sends CREATE_VOLUMES or DESTROY_VOLUMES; destroy names the
// volume as the agent lists it.
func volumeChange(c *cliFlags, pos []string, principal string, agents *mmaster.Response_GetAgents, stdout io.Writer) error {
	switch {
	case len(pos) == 6 && pos[0] == "create":
		list, err := dynamicResources(fmt.Sprintf("disk(%s):%s", pos[2], pos[4]), principal)
		if err != nil {
			return usagef("%v", err)
		}
		v := list[0]
		rw := mesos.RW
		v.Disk = &mesos.Resource_DiskInfo{Persistence: &mesos.Resource_DiskInfo_Persistence{ID: pos[3]}, Volume: &mesos.Volume{ContainerPath: pos[5], Mode: &rw}}
		if principal != "" {
			v.Disk.Persistence.Principal = &principal
		}
		call := mmaster.Call{Type: mmaster.Call_CREATE_VOLUMES, CreateVolumes: &mmaster.Call_CreateVolumes{AgentID: mesos.AgentID{Value: pos[1]}, Volumes: []mesos.Resource{v}}}
		if err := operatorPost(c, &call, nil); err != nil {
			return err
		}
	case len(pos) == 4 && pos[0] == "destroy":
		v, ok := findVolume(agents, pos[1], pos[2], pos[3])
		if !ok {
			return fmt.Errorf("agent %s has no persistent volume %q of role %q", pos[1], pos[3], pos[2])
		}
		call := mmaster.Call{Type: mmaster.Call_DESTROY_VOLUMES, DestroyVolumes: &mmaster.Call_DestroyVolumes{AgentID: mesos.AgentID{Value: pos[1]}, Volumes: []mesos.Resource{v}}}
		if err := operatorPost(c, &call, nil); err != nil {
			return err
		}
	default:
		return usagef("want create AGENT ROLE ID SIZE PATH or destroy AGENT ROLE ID")
	}
	fmt.Fprintf(stdout, "%s: volume %s of role %s on agent %s\n", pos[0], pos[3], pos[2], pos[1])
	return nil
}

func findVolume(agents *mmaster.Response_GetAgents, agent, role, id string) (mesos.Resource, bool) {
	for _, a := range agents.GetAgents() {
		if a.AgentInfo.GetID().GetValue() != agent {
			continue
		}
		for _, r := range a.TotalResources {
			if r.IsPersistentVolume() && r.ReservationRole() == role && r.Disk.Persistence.ID == id {
				return r, true
			}
		}
	}
	return mesos.Resource{}, false
}

// volumeRow is one volume as `allot volumes` lists it.
type volumeRow struct {
	Agent         string  `json:"agent_id"`
	Role          string  `json:"role"`
	ID            string  `json:"persistence_id"`
	SizeMB        float64 `json:"size_mb"`
	ContainerPath string  `json:"container_path"`
	Principal     string  `json:"principal,omitempty"`
}

func printVolumes(w io.Writer, asJSON bool, ids idPrinter, agents *mmaster.Response_GetAgents) error {
	rows := []volumeRow{}
	for _, a := range agents.GetAgents() {
		for _, r := range a.TotalResources {
			if r.IsPersistentVolume() {
				rows = append(rows, volumeRow{Agent: a.AgentInfo.GetID().GetValue(), Role: r.ReservationRole(), ID: r.Disk.Persistence.ID,
					SizeMB: r.GetScalar().GetValue(), ContainerPath: r.Disk.GetVolume().GetContainerPath(), Principal: r.Disk.Persistence.GetPrincipal()})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].Agent+rows[i].Role+rows[i].ID < rows[j].Agent+rows[j].Role+rows[j].ID
	})
	if asJSON {
		return printJSON(w, rows)
	}
	tb := newTable(w, "AGENT", "ROLE", "ID", "SIZE (MB)", "PATH", "PRINCIPAL")
	for _, r := range rows {
		tb.row(ids.id(kindAgent, r.Agent), r.Role, r.ID, strconv.FormatFloat(r.SizeMB, 'g', -1, 64), r.ContainerPath, r.Principal)
	}
	return tb.flush()
}
