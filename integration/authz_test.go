package integration

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// ACLs on real processes: a framework that asks for a
// role the ACLs deny gets 403 naming the ACL, and a task as a denied user
// fails alone with TASK_ERROR, while another framework's tasks run.
//
// Every caller here is unauthenticated, so the rules use NONE subjects,
// which match every caller, authenticated or not;
// TestACLsByAuthenticatedPrincipal is the per-principal variant.
func TestACLsDenyWhileOthersCarryOn(t *testing.T) {
	acls := filepath.Join(t.TempDir(), "acls.json")
	if err := os.WriteFile(acls, []byte(`{
		"register_frameworks": [{"principals": {"type": "NONE"}, "roles": {"values": ["prod"]}}],
		"run_tasks": [{"principals": {"type": "NONE"}, "users": {"values": ["forbidden"]}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, 1, "--acls", acls)

	sub := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"root","name":"prod-fw","role":"prod"}}}`
	code, body := postRaw(t, c.MasterAddr, "/api/v1/scheduler", "application/json", []byte(sub), nil)
	if code != http.StatusForbidden || !strings.Contains(body, "register_frameworks[0]") || !strings.Contains(body, `role "prod"`) {
		t.Fatalf("SUBSCRIBE in role prod answered %d %q, want 403 naming register_frameworks[0] and the role", code, body)
	}

	other := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "bystander"})
	o := other.takeOffer(t, "")
	bad := cmdTask("as-forbidden", o, "true", 0.1, 32)
	bad.Command.User = strp("forbidden")
	if err := other.call(launch(o, cmdTask("fine", o, "true", 0.1, 32), bad)); err != nil {
		t.Fatalf("ACCEPT: %v", err)
	}
	st := other.waitState(t, "as-forbidden", mesos.TASK_ERROR)
	if !strings.Contains(st.GetMessage(), "run_tasks[0]") || st.GetReason() != mesos.REASON_TASK_UNAUTHORIZED {
		t.Errorf("denied task's update %s %q, want TASK_UNAUTHORIZED naming run_tasks[0]", st.GetReason(), st.GetMessage())
	}
	other.waitState(t, "fine", mesos.TASK_FINISHED)

	resp, err := http.Get("http://" + c.MasterAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	metrics, _ := io.ReadAll(resp.Body)
	for _, want := range []string{`allot_master_authz_denials_total{action="register_frameworks"} 1`, `allot_master_authz_denials_total{action="run_tasks"} 1`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// aclPrincipalsFiles writes credentials for alice and bob and ACLs under
// which alice may register in role prod and bob may not, and bob may run
// tasks as root only. Rule indices matter: the denials name them.
func aclPrincipalsFiles(t *testing.T) (creds, acls string) {
	t.Helper()
	dir := t.TempDir()
	creds, acls = filepath.Join(dir, "credentials.json"), filepath.Join(dir, "acls.json")
	if err := os.WriteFile(creds, []byte(`{"credentials":[{"principal":"alice","secret":"alice-secret"},{"principal":"bob","secret":"bob-secret"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(acls, []byte(`{
		"register_frameworks": [
			{"principals": {"values": ["alice"]}, "roles": {"values": ["prod"]}},
			{"principals": {"type": "NONE"},      "roles": {"values": ["prod"]}}],
		"run_tasks": [
			{"principals": {"values": ["alice"]}, "users": {"type": "ANY"}},
			{"principals": {"values": ["bob"]},   "users": {"values": ["root"]}},
			{"principals": {"type": "NONE"},      "users": {"type": "ANY"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return creds, acls
}

// ACLs by authenticated principal on real processes, through mesos-go's
// own client with its own Basic auth: bob may not register in role prod
// (403 naming register_frameworks[1], through mesos-go's error) while
// alice's framework in prod runs a task; bob, registered in the default
// role, gets TASK_ERROR naming run_tasks[2] for a task as a user he may
// not run as, while his task as root finishes.
func TestACLsByAuthenticatedPrincipal(t *testing.T) {
	creds, acls := aclPrincipalsFiles(t)
	c := newCluster(t, 1, "--credentials", creds, "--authenticate-frameworks", "--acls", acls)

	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	start := time.Now()
	resp, err := basicCaller(c.MasterAddr, "bob", "bob-secret").Call(ctx, calls.Subscribe(&mesos.FrameworkInfo{User: "root", Name: "bob-prod", Role: strp("prod")}))
	cancel()
	if resp != nil {
		resp.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "register_frameworks[1]") || !strings.Contains(err.Error(), `principal "bob"`) ||
		!strings.Contains(err.Error(), `role "prod"`) {
		t.Fatalf("bob's SUBSCRIBE in role prod: %v, want a 403 naming register_frameworks[1], principal bob and role prod", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("bob's refusal took %v: a 403 must come at once", d)
	}

	alice := subscribeWith(t, basicCaller(c.MasterAddr, "alice", "alice-secret"), mesos.FrameworkInfo{Name: "alice-prod", Role: strp("prod")})
	o := alice.takeOffer(t, "")
	if err := alice.call(launch(o, cmdTask("alice-1", o, "true", 0.1, 32))); err != nil {
		t.Fatalf("alice's ACCEPT: %v", err)
	}
	alice.waitState(t, "alice-1", mesos.TASK_FINISHED)
	alice.close() // so that the offer she holds of the agent's rest returns for bob

	bob := subscribeWith(t, basicCaller(c.MasterAddr, "bob", "bob-secret"), mesos.FrameworkInfo{Name: "bob-default"})
	o = bob.takeOffer(t, "")
	bad := cmdTask("bob-as-prodsvc", o, "true", 0.1, 32)
	bad.Command.User = strp("prodsvc")
	if err := bob.call(launch(o, cmdTask("bob-as-root", o, "true", 0.1, 32), bad)); err != nil {
		t.Fatalf("bob's ACCEPT: %v", err)
	}
	st := bob.waitState(t, "bob-as-prodsvc", mesos.TASK_ERROR)
	if msg := st.GetMessage(); !strings.Contains(msg, "run_tasks[2]") || !strings.Contains(msg, `principal "bob"`) ||
		!strings.Contains(msg, `user "prodsvc"`) || st.GetReason() != mesos.REASON_TASK_UNAUTHORIZED {
		t.Errorf("bob's task as prodsvc: %s %q, want TASK_UNAUTHORIZED naming run_tasks[2], bob and the user", st.GetReason(), msg)
	}
	bob.waitState(t, "bob-as-root", mesos.TASK_FINISHED)
}
