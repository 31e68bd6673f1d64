package testcluster

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// binDirEnv hands a test binary run again by InOwnNetNS the directory of
// the binaries Main built, so that it does not build them again.
const binDirEnv = "ALLOT_TEST_BIN_DIR"

// netnsEnv names the test a re-run binary is to do in its namespace.
const netnsEnv = "ALLOT_TEST_NETNS"

// builtDir is where Main put the binaries ("" outside Main).
var builtDir string

// InOwnNetNS runs the calling test again, alone, in a new network
// namespace (unshare -n) with its loopback up, and reports whether the
// caller is that run, which then does the test's work: everything it
// starts, masters, agents, executors and the bridges, addresses and
// iptables rules of CNI plugins, lives in that namespace and goes with it,
// never touching the host's network. The outer run logs the inner one's
// output and fails or skips as it did. Needs root and unshare(1), else the
// test is skipped saying so.
func InOwnNetNS(t *testing.T) bool {
	t.Helper()
	if os.Getenv(netnsEnv) == t.Name() {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			t.Skipf("needs ip(8) to set lo up in the test's network namespace: %v %s", err, out)
		}
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace of its own; running as uid", os.Geteuid())
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare(1) for a network namespace of its own")
	}
	args := []string{"-n", os.Args[0], "-test.run", "^" + t.Name() + "$", "-test.v", "-test.count=1"}
	cmd := exec.Command(unshare, args...)
	cmd.Env = append(os.Environ(), netnsEnv+"="+t.Name(), binDirEnv+"="+builtDir)
	out, err := cmd.CombinedOutput()
	t.Logf("run again in a network namespace of its own:\n%s", out)
	if err != nil {
		t.Fatalf("the test in its network namespace: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip("skipped in its network namespace (see the log)")
	}
	return false
}
