package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	magent "github.com/mesos/mesos-go/api/v1/lib/agent"

	"github.com/allot-sched/allot/api/operator"
)

// agentAddr is the address the master's /state gives for agent id.
func agentAddr(st *operator.State, id string) (string, error) {
	for _, a := range st.Slaves {
		if a.ID == id && a.PID != "" {
			return strings.TrimPrefix(a.PID, "slave(1)@"), nil
		}
	}
	return "", fmt.Errorf("agent %s: the master gives no address for it", id)
}

// gpuDevices names the GPUs the container of live task t holds, as the
// agent that runs it reports them (the master knows only how many): its
// GET_CONTAINERS gives the container of t's executor, its /state the
// indices assigned to that container (gpus.assigned) and their UUIDs
// (gpus.detected; the index where the agent found no UUID).
func gpuDevices(c *cliFlags, st *operator.State, t operator.Task) ([]string, error) {
	addr, err := agentAddr(st, t.SlaveID)
	if err != nil {
		return nil, err
	}
	cli := c.client()
	b, err := call(cli, addr, http.MethodPost, "/api/v1", []byte(`{"type":"GET_CONTAINERS"}`))
	if err != nil {
		return nil, err
	}
	var resp magent.Response
	if err := json.Unmarshal(b, &resp); err != nil {
		return nil, fmt.Errorf("the agent's GET_CONTAINERS answered %q: %v", b, err)
	}
	exID, cid := t.ExecutorID, ""
	if exID == "" {
		exID = t.ID // a command task runs in an executor named after it
	}
	for _, ct := range resp.GetGetContainers().GetContainers() {
		if ct.GetExecutorID().GetValue() == exID && ct.GetFrameworkID().GetValue() == t.FrameworkID {
			cid = ct.ContainerID.Value
		}
	}
	if cid == "" {
		return nil, fmt.Errorf("the agent runs no container for executor %s", exID)
	}
	if b, err = call(cli, addr, http.MethodGet, "/state", nil); err != nil {
		return nil, err
	}
	var doc struct {
		GPUs struct {
			Detected []struct {
				Index int    `json:"index"`
				UUID  string `json:"uuid"`
			} `json:"detected"`
			Assigned map[string][]int `json:"assigned"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("the agent's /state: %v", err)
	}
	var out []string
	for _, i := range doc.GPUs.Assigned[cid] {
		name := "index " + strconv.Itoa(i)
		for _, d := range doc.GPUs.Detected {
			if d.Index == i && d.UUID != "" {
				name = d.UUID
			}
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("container %s holds no GPU (the agent assigns them with --isolation=…,gpu/nvidia)", cid)
	}
	return out, nil
}
