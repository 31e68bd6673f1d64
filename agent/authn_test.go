package agent

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/auth"
)

// With --authenticate-http-executors the executor API takes only the
// token the agent issued for the executor the call names, and the token
// of another executor, another framework, an earlier container or another
// agent is refused.
func TestExecutorTokens(t *testing.T) {
	a := startedAgent(t, Config{Masters: []string{"127.0.0.1:1"}, Listen: "127.0.0.1:0", WorkDir: t.TempDir(),
		Resources: "cpus:1;mem:128;disk:100", Log: zerolog.Nop(), AuthenticateExecutors: true})
	// Two executors of framework f, as if launched.
	a.mu.Lock()
	for _, id := range []string{"e1", "e2"} {
		a.executors[exKey("f", id)] = &executor{fw: "f", id: id, containerID: "c-" + id, tasks: map[string]*agentTask{}}
	}
	a.mu.Unlock()
	tokenOf := func(ex *executor) string {
		for _, kv := range a.executorTokenEnv(ex) {
			if v, ok := strings.CutPrefix(kv, auth.ExecutorTokenEnv+"="); ok {
				return v
			}
		}
		t.Fatal("no token in the executor's environment")
		return ""
	}
	a.mu.Lock()
	e1, e2 := tokenOf(a.executors[exKey("f", "e1")]), tokenOf(a.executors[exKey("f", "e2")])
	a.mu.Unlock()
	other, _ := auth.NewExecutorSigner([]byte("another agent's key, 32 bytes.."))
	stale := a.execTokens.Issue(auth.ExecutorClaims{FrameworkID: "f", ExecutorID: "e1", ContainerID: "c-old"})
	msg := func(ex string) string {
		return `{"type":"MESSAGE","framework_id":{"value":"f"},"executor_id":{"value":"` + ex + `"},"message":{"data":"aGk="}}`
	}
	tests := []struct {
		name, auth, body string
		code             int
		want             string
	}{
		{"own token", "Bearer " + e1, msg("e1"), 202, ""},
		{"no token", "", msg("e1"), 401, auth.ExecutorTokenEnv},
		{"basic instead", "Basic YTpi", msg("e1"), 401, "Bearer"},
		{"no token, garbage body: 401 before parsing", "", "{nope", 401, auth.ExecutorTokenEnv},
		{"forged", "Bearer " + other.Issue(auth.ExecutorClaims{FrameworkID: "f", ExecutorID: "e1", ContainerID: "c-e1"}), msg("e1"), 401, "not issued by this agent"},
		{"another executor's token", "Bearer " + e2, msg("e1"), 403, "the token is executor e2's"},
		{"an earlier run's token", "Bearer " + stale, msg("e1"), 403, "earlier run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", "http://"+a.Addr()+"/api/v1/executor", bytes.NewReader([]byte(tt.body)))
			req.Header.Set("Content-Type", "application/json")
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.code || !strings.Contains(string(b), tt.want) {
				t.Fatalf("answered %d %q, want %d with %q", resp.StatusCode, b, tt.code, tt.want)
			}
			if tt.code == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("WWW-Authenticate = %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

// Without the flag no token is issued or asked for.
func TestExecutorTokensOff(t *testing.T) {
	a := &Agent{}
	if env := a.executorTokenEnv(&executor{fw: "f", id: "e"}); env != nil {
		t.Fatalf("token issued with authentication off: %v", env)
	}
	w := httptest.NewRecorder()
	c, ok := a.authenticateExecutor(w, httptest.NewRequest("POST", "/api/v1/executor", nil))
	if !ok || !a.authorizeExecutorCall(w, c, nil) {
		t.Fatal("call refused with authentication off")
	}
}

func TestWithoutExecutorToken(t *testing.T) {
	in := []string{"A=1", auth.ExecutorTokenEnv + "=secret", "MESOS_EXECUTOR_AUTHENTICATION_TOKENX=keep", "B=2"}
	got := strings.Join(withoutExecutorToken(in), " ")
	if want := "A=1 MESOS_EXECUTOR_AUTHENTICATION_TOKENX=keep B=2"; got != want {
		t.Fatalf("= %q, want %q", got, want)
	}
	if in[1] != auth.ExecutorTokenEnv+"=secret" {
		t.Fatal("the input was modified")
	}
}

// The agent presents its credential on the agent protocol, and a 401 at
// REGISTER says which flag to give.
func TestAgentCredential(t *testing.T) {
	var got []string
	master := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, s, _ := r.BasicAuth()
		got = append(got, p+":"+s)
		auth.Unauthorized(w, "Basic", "no")
	}))
	defer master.Close()
	addr := strings.TrimPrefix(master.URL, "http://")
	for _, tt := range []struct {
		cred *auth.Credential
		sent string
		hint string
	}{
		{nil, ":", "start this agent with --credential FILE"},
		{&auth.Credential{Principal: "ag", Secret: "s"}, "ag:s", `does not accept principal "ag"`},
	} {
		a, err := New(Config{Masters: []string{addr}, WorkDir: t.TempDir(), Resources: "cpus:1;mem:128;disk:100",
			Isolation: "posix/cpu,posix/mem", Log: zerolog.Nop(), Credential: tt.cred})
		if err != nil {
			t.Fatal(err)
		}
		err = a.registerAndServe(addr)
		if err == nil || !strings.Contains(err.Error(), tt.hint) {
			t.Errorf("REGISTER error %v, want the hint %q", err, tt.hint)
		}
		if got[len(got)-1] != tt.sent {
			t.Errorf("sent %q, want %q", got[len(got)-1], tt.sent)
		}
	}
}
