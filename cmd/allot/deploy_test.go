package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The example config files under deploy/ name only real flags with valid
// values: each is read by the flag set of the server it configures.
func TestDeployConfigs(t *testing.T) {
	fs := newFlagSet("master", "", "", io.Discard)
	var f masterFlags
	addMasterFlags(fs, &f)
	var path string
	addConfigFlag(fs, &path)
	if err := parseServerFlags(fs, []string{"--config", "../../deploy/allot-master.conf"}, &path); err != nil {
		t.Errorf("deploy/allot-master.conf: %v", err)
	}
	if f.workDir != "/var/lib/allot-master" || f.listen != "0.0.0.0:5050" {
		t.Errorf("deploy/allot-master.conf: work-dir %q, listen %q", f.workDir, f.listen)
	}
	// runAgent reads the file, then stops at the bad --attributes, before
	// it would start anything.
	err := runAgent([]string{"--config", "../../deploy/allot-agent.conf", "--attributes", "no-colon"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--attributes") {
		t.Errorf("deploy/allot-agent.conf: %v, want it read and the bad --attributes refused", err)
	}
}

// The systemd units pass systemd-analyze verify where it is installed. The
// units start /usr/local/bin/allot, which verify wants executable: the
// copies checked start this test's binary instead.
func TestDeployUnitsVerify(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var units []string
	for _, name := range []string{"allot-master.service", "allot-agent.service"} {
		b, err := os.ReadFile(filepath.Join("../../deploy", name))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "/usr/local/bin/allot", self)), 0o644)
		units = append(units, p)
	}
	out, err := exec.Command(tool, append([]string{"verify", "--man=no"}, units...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
