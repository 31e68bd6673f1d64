package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/allot-sched/allot/agent"
	"github.com/allot-sched/allot/auth"
	"github.com/allot-sched/allot/master"
)

// Authentication flags (docs/security.md): the master's, named as Mesos
// names them; the agent's --credential; and the credential every client
// verb (status, tasks, operator, run ...) presents.

type authnFlags struct {
	credentials                                     string
	frameworks, agents, httpReadWrite, httpReadOnly bool
}

func addAuthnFlags(fs *flag.FlagSet, f *authnFlags) {
	fs.StringVar(&f.credentials, "credentials", "", "`file` of the principals and secrets the master accepts, Mesos's JSON\n{\"credentials\":[{\"principal\":\"p\",\"secret\":\"s\"}]} or one \"principal secret\" per line")
	fs.BoolVar(&f.frameworks, "authenticate-frameworks", false, "the scheduler API (/api/v1/scheduler) requires HTTP Basic with a principal from --credentials")
	fs.BoolVar(&f.agents, "authenticate-agents", false, "the agent protocol (/api/v1/allot/agent) requires the agent's --credential")
	fs.BoolVar(&f.httpReadWrite, "authenticate-http-readwrite", false, "the operator API (/api/v1), raft, snapshot, sorter and policy changes and /debug/pprof require a credential")
	fs.BoolVar(&f.httpReadOnly, "authenticate-http-readonly", false, "/state, /explain, /timelines, /pressure, /files/*, /metrics, GETs of raft/snapshot/sorter/policy and\nthe web UI require a credential (/health, /version and /redirect stay open)")
}

func (f authnFlags) config() (master.Authn, error) {
	a := master.Authn{Frameworks: f.frameworks, Agents: f.agents, HTTPReadWrite: f.httpReadWrite, HTTPReadOnly: f.httpReadOnly}
	if f.credentials == "" {
		if a.Frameworks || a.Agents || a.HTTPReadWrite || a.HTTPReadOnly {
			return a, usagef("--authenticate-* needs --credentials FILE (the principals and secrets to accept)")
		}
		return a, nil
	}
	c, err := auth.LoadCredentials(f.credentials)
	if err != nil {
		return a, usagef("--credentials: %v", err)
	}
	a.Credentials = c
	return a, nil
}

// agentCredential loads the agent's --credential (empty: none).
func agentCredential(path string) (*auth.Credential, error) {
	if path == "" {
		return nil, nil
	}
	c, err := auth.LoadCredential(path)
	if err != nil {
		return nil, usagef("--credential: %v", err)
	}
	return &c, nil
}

// credFlags is the credential a client presents to the masters.
type credFlags struct {
	principal, secret, secretFile string
}

func addCredFlags(fs *flag.FlagSet, c *credFlags) {
	fs.StringVar(&c.principal, "principal", "", "authenticate to the master as this `principal` (HTTP Basic), when it runs with --authenticate-*")
	fs.StringVar(&c.secret, "secret", "", "the principal's `secret` (prefer ALLOT_SECRET or --secret-file: a flag shows in ps)")
	fs.StringVar(&c.secretFile, "secret-file", "", "read the principal's secret from this `file` (trailing white space dropped)")
}

// credential returns the credential given, or the zero one (no
// authentication) when no principal was.
func (c *credFlags) credential() (auth.Credential, error) {
	if c.principal == "" {
		if c.secret != "" || c.secretFile != "" {
			return auth.Credential{}, usagef("--secret and --secret-file need --principal (or ALLOT_PRINCIPAL)")
		}
		return auth.Credential{}, nil
	}
	s := c.secret
	if c.secretFile != "" {
		if s != "" {
			return auth.Credential{}, usagef("give --secret or --secret-file, not both")
		}
		b, err := os.ReadFile(c.secretFile)
		if err != nil {
			return auth.Credential{}, usagef("--secret-file: %v", err)
		}
		s = strings.TrimRight(string(b), " \t\r\n")
	}
	if s == "" {
		return auth.Credential{}, usagef("--principal %s needs --secret, --secret-file, or ALLOT_SECRET", c.principal)
	}
	return auth.Credential{Principal: c.principal, Secret: s}, nil
}

// transport is an http.RoundTripper presenting the credential; a bad
// --secret-file fails each request with the reason.
func (c *credFlags) transport() http.RoundTripper {
	cred, err := c.credential()
	if err != nil {
		return failingTransport{err}
	}
	return &auth.BasicTransport{Cred: cred}
}

// unauthorizedHint is added to a 401's message: what the CLI user can do.
const unauthorizedHint = "\n(the master requires a credential: give --principal with --secret or --secret-file, or set ALLOT_PRINCIPAL and ALLOT_SECRET)"

// devCredentials writes a throwaway credentials file for `allot dev
// --auth` in dir: one principal for people and frameworks, one for the
// agents; and the first one's secret alone in dir/secret. It returns the
// file, the operator's and the agents' credentials.
func devCredentials(dir string) (file string, op, ag auth.Credential, err error) {
	secret := func() string {
		b := make([]byte, 12)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	op = auth.Credential{Principal: "dev", Secret: secret()}
	ag = auth.Credential{Principal: "dev-agent", Secret: secret()}
	b, _ := json.MarshalIndent(map[string][]auth.Credential{"credentials": {op, ag}}, "", "  ")
	file = filepath.Join(dir, "credentials.json")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", op, ag, err
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return "", op, ag, fmt.Errorf("writing %s: %w", file, err)
	}
	// The operator's secret alone, for ALLOT_SECRET_FILE: a secret in the
	// environment shows in ps and in every child's environment.
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte(op.Secret+"\n"), 0o600); err != nil {
		return "", op, ag, fmt.Errorf("writing %s: %w", filepath.Join(dir, "secret"), err)
	}
	return file, op, ag, nil
}

// withCredential makes cli present the credential of c (if any) on every
// request, over whatever transport cli has (TLS included).
func withCredential(cli *http.Client, c *credFlags) *http.Client {
	cred, err := c.credential()
	if err != nil {
		cli.Transport = failingTransport{err}
		return cli
	}
	if cred.Principal == "" {
		return cli
	}
	cli.Transport = &auth.BasicTransport{Base: cli.Transport, Cred: cred}
	return cli
}

// agentHTTPFlags are the agent's authentication and authorization of its
// own HTTP endpoints, named as Mesos's agent names them.
type agentHTTPFlags struct {
	credentials, acls   string
	readOnly, readWrite bool
	pprof               bool
}

func addAgentHTTPFlags(fs *flag.FlagSet, f *agentHTTPFlags) {
	fs.StringVar(&f.credentials, "http-credentials", "", "`file` of the principals and secrets the agent's HTTP endpoints accept, in the master's --credentials\nformats (give it the principals that read sandboxes through the master: it forwards their credential)")
	fs.BoolVar(&f.readOnly, "authenticate-http-readonly", false, "/state, /monitor/* and the sandbox files (/files/*) require HTTP Basic with a principal from\n--http-credentials (/health stays open; the executor API has --authenticate-http-executors)")
	fs.BoolVar(&f.readWrite, "authenticate-http-readwrite", false, "the endpoints that change or load the agent (/debug/pprof with --pprof) require a credential")
	fs.StringVar(&f.acls, "acls", "", "ACL `file` (the master's format); the agent applies access_sandboxes (principal -> the executor's\nuser) to sandbox reads; empty: every caller that passes authentication may read every sandbox")
	fs.BoolVar(&f.pprof, "pprof", false, "serve the Go profiler at /debug/pprof (a read-write endpoint: pair it with --authenticate-http-readwrite)")
}

// config is the agent's HTTPAuthn and Authorizer from the flags.
func (f agentHTTPFlags) config() (agent.HTTPAuthn, auth.Authorizer, error) {
	h := agent.HTTPAuthn{ReadOnly: f.readOnly, ReadWrite: f.readWrite}
	var authz auth.Authorizer // a nil *auth.ACLs in it would not be nil
	if f.acls != "" {
		acls, err := auth.LoadACLs(f.acls)
		if err != nil {
			return h, nil, usagef("--acls: %v", err)
		}
		authz = acls
	}
	if f.credentials == "" {
		if h.ReadOnly || h.ReadWrite {
			return h, nil, usagef("--authenticate-http-readonly and --authenticate-http-readwrite need --http-credentials FILE")
		}
		return h, authz, nil
	}
	c, err := auth.LoadCredentials(f.credentials)
	if err != nil {
		return h, nil, usagef("--http-credentials: %v", err)
	}
	h.Credentials = c
	return h, authz, nil
}
