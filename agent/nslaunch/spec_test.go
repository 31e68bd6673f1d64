package nslaunch

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestMergeEnv(t *testing.T) {
	tests := []struct {
		lists [][]string
		want  []string
	}{
		{[][]string{{"A=1", "B=2"}, {"B=3", "C=4"}}, []string{"A=1", "B=3", "C=4"}},
		{[][]string{{"PATH=/img"}, nil, {"X=y", "PATH=/task"}}, []string{"PATH=/task", "X=y"}},
		{[][]string{{"A=1", "A=2"}}, []string{"A=2"}},
		{nil, nil},
	}
	for _, tc := range tests {
		if got := MergeEnv(tc.lists...); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("MergeEnv(%q) = %q, want %q", tc.lists, got, tc.want)
		}
	}
}

func TestSpecValidateAndNeeded(t *testing.T) {
	tests := []struct {
		name    string
		s       Spec
		wantErr string
		needed  bool
	}{
		{"plain", Spec{Argv: []string{"true"}}, "", false},
		{"no argv", Spec{}, "argv is empty", false},
		{"relative rootfs", Spec{Argv: []string{"x"}, Rootfs: "img"}, "not absolute", true},
		{"relative mount", Spec{Argv: []string{"x"}, Mounts: []Mount{{Source: "a", Target: "/b"}}}, "must be absolute", true},
		{"rootfs", Spec{Argv: []string{"x"}, Rootfs: "/r"}, "", true},
		{"netns", Spec{Argv: []string{"x"}, NetNS: "/proc/1/ns/net"}, "", true},
		{"device", Spec{Argv: []string{"x"}, Devices: []Device{{Path: "/dev/nvidia0"}}}, "", true},
		{"user only", Spec{Argv: []string{"x"}, User: &User{UID: 1}}, "", false},
		{"cgroups", Spec{Argv: []string{"x"}, Cgroups: []string{"/sys/fs/cgroup/memory/a/cgroup.procs"}}, "", true},
		{"cgroup not a procs file", Spec{Argv: []string{"x"}, Cgroups: []string{"/sys/fs/cgroup/memory/a/memory.limit_in_bytes"}}, "cgroup.procs", true},
		{"cgroup relative", Spec{Argv: []string{"x"}, Cgroups: []string{"memory/a/cgroup.procs"}}, "absolute", true},
		{"cgroup climbs", Spec{Argv: []string{"x"}, Cgroups: []string{"/sys/fs/cgroup/../../etc/cgroup.procs"}}, "clean", true},
	}
	for _, tc := range tests {
		err := tc.s.Validate()
		if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.wantErr)
		}
		if got := tc.s.Needed(); got != tc.needed {
			t.Errorf("%s: Needed() = %v, want %v", tc.name, got, tc.needed)
		}
	}
}

// SecureJoin resolves links as the container sees them: an image cannot
// point a mount target at the host's files, by an absolute link or "..".
func TestSecureJoin(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "real", "dir"), 0o755)
	os.Symlink("/etc", filepath.Join(root, "abs"))       // host /etc, were it followed on the host
	os.Symlink("../../../..", filepath.Join(root, "up")) // climbs past root
	os.Symlink("real/dir", filepath.Join(root, "rel"))   // stays inside
	os.Symlink("loop2", filepath.Join(root, "loop1"))    // never ends
	os.Symlink("loop1", filepath.Join(root, "loop2"))
	tests := []struct {
		path, want, wantErr string
	}{
		{"/mnt/mesos/sandbox", "/mnt/mesos/sandbox", ""},
		{"/abs/passwd", "/etc/passwd", ""},
		{"/up/etc/shadow", "/etc/shadow", ""},
		{"/rel/x", "/real/dir/x", ""},
		{"/../../x", "/x", ""},
		{"/loop1/x", "", "too many symbolic links"},
	}
	for _, tc := range tests {
		got, err := SecureJoin(root, tc.path)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("SecureJoin(%q) = %q, %v; want error %q", tc.path, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != filepath.Join(root, tc.want) {
			t.Errorf("SecureJoin(%q) = %q, %v; want %q", tc.path, got, err, filepath.Join(root, tc.want))
		}
	}
}

func TestDecodeRejectsUnknownFields(t *testing.T) {
	_, err := Decode(strings.NewReader(`{"argv":["x"],"rootfs_typo":"/"}`))
	if err == nil || !strings.Contains(err.Error(), "rootfs_typo") {
		t.Fatalf("Decode = %v, want an error naming the unknown field", err)
	}
}
