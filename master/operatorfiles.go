package master

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	magent "github.com/mesos/mesos-go/api/v1/lib/agent"
	mmaster "github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/auth"
)

// The operator API's LIST_FILES and READ_FILE on the master reach the
// sandboxes on the agents, as /files/* does (files.go): a path names the
// agent as Mesos's work directory does, /slaves/A/frameworks/F/executors/E/
// runs/R[/file] (R may be "latest"), and the master asks agent A's
// operator API for /frameworks/F/executors/E/runs/R[/file], with the
// caller's credential and nothing of its own. The master authorizes
// access_sandboxes first, as for /files/*; the agent authorizes again.
// Listed paths come back in the /slaves/A/... form, so a client can browse
// on with what it got. (Mesos's master serves only its own log here; an
// allot master has no log file, and its sandboxes are what a client of the
// master wants to read.)

// maxAgentAnswerBytes bounds what the master reads of an agent's answer:
// a READ_FILE is at most 1 MiB of data, a listing of a sandbox directory
// far less.
const maxAgentAnswerBytes = 8 << 20

// splitSandboxPath splits /slaves/A/rest into A and /rest.
func splitSandboxPath(call, p string) (agentID, rest string, err error) {
	parts := strings.SplitN(strings.TrimPrefix(p, "/"), "/", 3)
	if len(parts) < 3 || parts[0] != "slaves" || parts[1] == "" || !strings.HasPrefix(parts[2], "frameworks/") {
		return "", "", api.Errorf(http.StatusBadRequest,
			"%s: path %q: want /slaves/AGENT_ID/frameworks/F/executors/E/runs/latest[/file] (allot agents and allot tasks show the ids)", call, p)
	}
	return parts[1], "/" + parts[2], nil
}

// operatorFiles answers LIST_FILES and READ_FILE from the agent that holds
// the sandbox.
func (m *Master) operatorFiles(r *http.Request, call *mmaster.Call) (*mmaster.Response, error) {
	var p string
	ac := &magent.Call{}
	switch {
	case call.Type == mmaster.Call_LIST_FILES && call.ListFiles != nil:
		p = call.ListFiles.Path
		ac.Type = magent.Call_LIST_FILES
	case call.Type == mmaster.Call_READ_FILE && call.ReadFile != nil:
		p = call.ReadFile.Path
		ac.Type = magent.Call_READ_FILE
	default:
		return nil, api.Errorf(http.StatusBadRequest, "%s call without %s", call.Type, strings.ToLower(call.Type.String()))
	}
	agentID, rest, err := splitSandboxPath(call.Type.String(), p)
	if err != nil {
		return nil, err
	}
	if err := m.authorizeSandboxPath(auth.SubjectFrom(r.Context()), rest); err != nil {
		return nil, err
	}
	if ac.Type == magent.Call_LIST_FILES {
		ac.ListFiles = &magent.Call_ListFiles{Path: rest}
	} else {
		ac.ReadFile = &magent.Call_ReadFile{Path: rest, Offset: call.ReadFile.Offset, Length: call.ReadFile.Length}
	}
	resp, err := m.callAgent(r, call.Type.String(), agentID, ac)
	if err != nil {
		return nil, err
	}
	if ac.Type == magent.Call_READ_FILE {
		rf := resp.GetReadFile()
		if rf == nil {
			return nil, api.Errorf(http.StatusBadGateway, "READ_FILE: agent %s answered without read_file", agentID)
		}
		if rf.Data == nil {
			rf.Data = []byte{}
		}
		return &mmaster.Response{Type: mmaster.Response_READ_FILE, ReadFile: &mmaster.Response_ReadFile{Size_: rf.Size_, Data: rf.Data}}, nil
	}
	infos := resp.GetListFiles().GetFileInfos()
	for i := range infos {
		infos[i].Path = "/slaves/" + agentID + infos[i].Path
	}
	return &mmaster.Response{Type: mmaster.Response_LIST_FILES, ListFiles: &mmaster.Response_ListFiles{FileInfos: infos}}, nil
}

// authorizeSandboxPath is allowSandbox for an operator call's path.
// Takes m.mu.
func (m *Master) authorizeSandboxPath(who auth.Subject, p string) error {
	if m.authz.authorizer == nil {
		return nil
	}
	owners := sandboxOwners(p)
	m.mu.Lock()
	users := make([]string, 0, len(owners)+1)
	for _, o := range owners {
		users = append(users, m.taskUserLocked(o[0], o[1], true))
	}
	m.mu.Unlock()
	if len(users) == 0 {
		users = append(users, "")
	}
	for _, u := range users {
		if err := m.authorize(who, auth.AccessSandboxes, u, false); err != nil {
			return err
		}
	}
	return nil
}

// callAgent sends ac to agent id's operator API with the caller's
// credential and decodes its answer; an agent's refusal keeps its status.
// Takes m.mu.
func (m *Master) callAgent(r *http.Request, what, id string, ac *magent.Call) (*magent.Response, error) {
	m.mu.Lock()
	a, ok := m.agents[id]
	addr := ""
	if ok {
		addr = a.rec.Address
	}
	m.mu.Unlock()
	if !ok {
		return nil, api.Errorf(http.StatusNotFound, "%s: agent %s is not registered with this master", what, id)
	}
	body, err := ac.Marshal()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(r.Context(), filesProxyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.scheme()+"://"+addr+"/api/v1", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", api.MediaProtobuf)
	req.Header.Set("Accept", api.MediaProtobuf)
	if h := r.Header.Get("Authorization"); h != "" {
		req.Header.Set("Authorization", h)
	}
	hc := &http.Client{Transport: m.agentTransport(&http.Transport{DisableKeepAlives: true})}
	resp, err := hc.Do(req)
	if err != nil {
		m.log.Warn().Err(err).Str("agent_id", id).Str("agent", addr).Msg("operator files: agent unreachable")
		return nil, api.Errorf(http.StatusBadGateway, "%s: agent %s at %s did not answer: %v", what, id, addr, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAgentAnswerBytes))
	if err != nil {
		return nil, api.Errorf(http.StatusBadGateway, "%s: reading agent %s's answer: %v", what, id, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, api.Errorf(resp.StatusCode, "%s: agent %s: %s", what, id, strings.TrimSpace(string(b)))
	}
	var out magent.Response
	if err := out.Unmarshal(b); err != nil {
		return nil, api.Errorf(http.StatusBadGateway, "%s: agent %s's answer: %v", what, id, fmt.Sprint(err))
	}
	return &out, nil
}
