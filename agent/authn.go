package agent

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	exec1 "github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"

	"github.com/allot-sched/allot/auth"
)

// Authentication on the agent, both directions:
//
//   - to the master: with Config.Credential the agent presents its
//     principal and secret as HTTP Basic on every agent-protocol call,
//     which a master with --authenticate-agents requires;
//   - from executors: with Config.AuthenticateExecutors
//     (--authenticate-http-executors) the agent gives each executor a
//     token in MESOS_EXECUTOR_AUTHENTICATION_TOKEN, signed for its
//     framework, executor and container, and the executor API requires it
//     as "Authorization: Bearer": one executor cannot speak for another.
//
// The token key is kept in the work dir, so executors recovered after an
// agent restart keep working tokens.

// executorKeyFile is where the token key lives, under WorkDir.
const executorKeyFile = "meta/executor-token.key"

// openExecutorSigner loads (or makes) the agent's token key when
// executor authentication is on.
func openExecutorSigner(cfg Config) (*auth.ExecutorSigner, error) {
	if !cfg.AuthenticateExecutors {
		return nil, nil
	}
	key, err := auth.LoadOrCreateExecutorKey(filepath.Join(cfg.WorkDir, executorKeyFile))
	if err != nil {
		return nil, fmt.Errorf("--authenticate-http-executors: %w", err)
	}
	return auth.NewExecutorSigner(key)
}

// executorTokenEnv is the token entry of ex's environment (none when
// executor authentication is off).
func (a *Agent) executorTokenEnv(ex *executor) []string {
	if a.execTokens == nil {
		return nil
	}
	tok := a.execTokens.Issue(auth.ExecutorClaims{FrameworkID: ex.fw, ExecutorID: ex.id, ContainerID: ex.containerID})
	return []string{auth.ExecutorTokenEnv + "=" + tok}
}

// authenticateExecutor checks an executor API request's bearer token
// before its body is read, answering 401 itself for none or one this
// agent did not sign. It returns the token's claims (nil with executor
// authentication off) and whether the request may go on.
func (a *Agent) authenticateExecutor(w http.ResponseWriter, r *http.Request) (*auth.ExecutorClaims, bool) {
	if a.execTokens == nil {
		return nil, true
	}
	tok, ok := auth.BearerToken(r)
	if !ok {
		auth.Unauthorized(w, "Bearer", "the executor API requires \"Authorization: Bearer\" with the token this agent gave the executor in %s (the agent runs with --authenticate-http-executors)", auth.ExecutorTokenEnv)
		return nil, false
	}
	c, err := a.execTokens.Check(tok)
	if err != nil {
		auth.Unauthorized(w, "Bearer", "%v", err)
		return nil, false
	}
	return &c, true
}

// authorizeExecutorCall answers 403 itself, and reports false, when the
// claims of an authenticated token do not cover the decoded call: another
// framework or executor, or an earlier run of this one.
func (a *Agent) authorizeExecutorCall(w http.ResponseWriter, c *auth.ExecutorClaims, call *exec1.Call) bool {
	if c == nil {
		return true
	}
	if err := a.claimsMatch(*c, call); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return false
	}
	return true
}

// claimsMatch says why a valid token does not cover call, if it does not.
func (a *Agent) claimsMatch(c auth.ExecutorClaims, call *exec1.Call) error {
	fw, ex := call.FrameworkID.GetValue(), call.ExecutorID.GetValue()
	if c.FrameworkID != fw || c.ExecutorID != ex {
		return fmt.Errorf("the token is executor %s's of framework %s; the call is for executor %s of framework %s", c.ExecutorID, c.FrameworkID, ex, fw)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.executors[exKey(fw, ex)]; e != nil && e.containerID != c.ContainerID {
		return errors.New("the token was issued to an earlier run (container " + c.ContainerID + ") of executor " + ex + ", not the one running now")
	}
	return nil
}

// presentCredential adds the agent's credential to a call to the master.
func (a *Agent) presentCredential(req *http.Request) {
	if c := a.cfg.Credential; c != nil {
		req.SetBasicAuth(c.Principal, c.Secret)
	}
}

// registerRefused explains a REGISTER the master answered 401: which flag
// the operator must give this agent.
func (a *Agent) registerRefused(status int) string {
	if status != http.StatusUnauthorized {
		return ""
	}
	if a.cfg.Credential == nil {
		return " (the master runs with --authenticate-agents: start this agent with --credential FILE holding a principal and secret from the master's --credentials)"
	}
	return fmt.Sprintf(" (the master does not accept principal %q with this agent's --credential secret: check the master's --credentials)", a.cfg.Credential.Principal)
}

// ExecutorTokenOpts are the mesos-go client options with which an executor
// presents the token its agent gave it (none when it was given none). An
// unmodified mesos-go executor needs the same one option: mesos-go
// v0.0.11 does not read MESOS_EXECUTOR_AUTHENTICATION_TOKEN itself.
func ExecutorTokenOpts() []httpcli.Opt {
	h := auth.ExecutorAuthorization()
	if h == "" {
		return nil
	}
	return []httpcli.Opt{httpcli.RequestOptions(httpcli.Header("Authorization", h))}
}

// withoutExecutorToken drops the executor's token from the environment its
// tasks get: a task is not its executor, and a token in a task's
// environment is one ps or /proc away from anyone on the host.
func withoutExecutorToken(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, auth.ExecutorTokenEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}
