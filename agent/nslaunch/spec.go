package nslaunch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// SandboxPath is where a container with its own root filesystem sees its
// sandbox (Mesos's /mnt/mesos/sandbox, MESOS_SANDBOX inside).
const SandboxPath = "/mnt/mesos/sandbox"

// Spec is one container's launch. The zero value runs Argv on the host as
// the caller's user.
type Spec struct {
	// Rootfs is the directory that becomes the container's "/"; "" keeps
	// the host's filesystem.
	Rootfs string `json:"rootfs,omitempty"`
	// Mounts are bind mounts made before entering Rootfs, in order (a
	// later target may lie inside an earlier one).
	Mounts []Mount `json:"mounts,omitempty"`
	// Devices are device files made visible at Path inside Rootfs (bound
	// from the host's node); on the host filesystem they are there already.
	Devices []Device `json:"devices,omitempty"`
	// NetNS is a network namespace to join first (a path such as
	// /var/run/netns/x or /proc/PID/ns/net); "" keeps the agent's network.
	NetNS string `json:"netns,omitempty"`
	// Hostname, when set, gives the container a UTS namespace of its own
	// with this host name.
	Hostname string `json:"hostname,omitempty"`
	// Dir is the working directory, seen from inside ("" is "/").
	Dir string `json:"dir,omitempty"`
	// Env is the program's whole environment ("K=V"); PATH in it finds
	// Argv[0] when that has no slash.
	Env []string `json:"env,omitempty"`
	// Argv is the program and its arguments.
	Argv []string `json:"argv"`
	// User, when set, is who the program runs as; nil keeps the caller's.
	User *User `json:"user,omitempty"`
	// Cgroups are cgroup.procs files (one per hierarchy on cgroup v1) the
	// launcher writes its own pid into first, while it is still root: the
	// program then runs its first instruction inside every one of them,
	// and none of them need be writable by its user (a cgroup.procs that
	// user could write would let any of its processes move itself in or
	// out, past the container's limits).
	Cgroups []string `json:"cgroups,omitempty"`
}

// Mount binds Source (a host path) at Target (a path inside the
// container, or on the host when there is no Rootfs).
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readonly,omitempty"`
}

// Device is a device file of the host (HostPath, "" = Path) that appears at
// Path inside the container. Major, Minor and Access ("rwm") describe it for
// a devices cgroup allow-list; the launcher itself only binds the node.
type Device struct {
	Path     string `json:"path"`
	HostPath string `json:"host_path,omitempty"`
	Major    int64  `json:"major,omitempty"`
	Minor    int64  `json:"minor,omitempty"`
	Access   string `json:"access,omitempty"`
}

// User is a uid, gid and supplementary groups.
type User struct {
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
}

// Needed reports whether s asks for anything a plain fork and exec cannot
// give (a root filesystem, mounts, devices, a namespace, cgroups joined by
// root for another user).
func (s *Spec) Needed() bool {
	return s != nil && (s.Rootfs != "" || len(s.Mounts) > 0 || len(s.Devices) > 0 || s.NetNS != "" || s.Hostname != "" ||
		len(s.Cgroups) > 0)
}

// Validate says what is wrong with s, or nil.
func (s *Spec) Validate() error {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return errors.New("nslaunch: spec has no program (argv is empty)")
	}
	if s.Rootfs != "" && !filepath.IsAbs(s.Rootfs) {
		return fmt.Errorf("nslaunch: rootfs %q is not absolute", s.Rootfs)
	}
	for _, m := range s.Mounts {
		if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Target) {
			return fmt.Errorf("nslaunch: mount %q at %q: both paths must be absolute", m.Source, m.Target)
		}
	}
	for _, d := range s.Devices {
		if !filepath.IsAbs(d.Path) || (d.HostPath != "" && !filepath.IsAbs(d.HostPath)) {
			return fmt.Errorf("nslaunch: device %q: paths must be absolute", d.Path)
		}
	}
	for _, p := range s.Cgroups {
		// The launcher writes these as root: nothing but a cgroup.procs.
		if !filepath.IsAbs(p) || filepath.Clean(p) != p || filepath.Base(p) != "cgroup.procs" {
			return fmt.Errorf("nslaunch: cgroup %q: want the absolute, clean path of a cgroup.procs file", p)
		}
	}
	return nil
}

// Encode writes s as JSON.
func (s *Spec) Encode(w io.Writer) error { return json.NewEncoder(w).Encode(s) }

// Decode reads a Spec written by Encode and validates it.
func Decode(r io.Reader) (*Spec, error) {
	var s Spec
	dec := json.NewDecoder(io.LimitReader(r, 16<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("nslaunch: reading spec: %w", err)
	}
	return &s, s.Validate()
}

// SpecFD and ErrFD are the descriptors the launcher reads its Spec from
// and reports a failure to, when the files of Pipes are the first of
// exec.Cmd.ExtraFiles: pipes, so that the Spec, which holds the program's
// environment, is written nowhere and shown in no argv, and so that a
// launch that fails before its exec says why to the caller, not only to
// the program's stderr.
const SpecFD, ErrFD = 3, 4

// LaunchArgs is launcher (the allot binary and its "container-launch"
// subcommand, e.g. {"/usr/bin/allot", "container-launch"}) with the flags
// that name SpecFD and ErrFD.
func LaunchArgs(launcher []string) []string {
	return append(append([]string(nil), launcher...), "--spec-fd", fmt.Sprint(SpecFD), "--err-fd", fmt.Sprint(ErrFD))
}

// Pipes are one launch's pipes: the Spec to the launcher, its failure
// back.
type Pipes struct {
	spec        *Spec
	child       []*os.File // the launcher's ends
	specW, errR *os.File
}

// NewPipes validates s and makes the pipes that carry it.
func NewPipes(s *Spec) (*Pipes, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	specR, specW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		specR.Close()
		specW.Close()
		return nil, err
	}
	return &Pipes{spec: s, child: []*os.File{specR, errW}, specW: specW, errR: errR}, nil
}

// ExtraFiles are the launcher's ends, to be the first of its
// exec.Cmd.ExtraFiles.
func (p *Pipes) ExtraFiles() []*os.File { return p.child }

// Started must be called once after the launcher was started (startErr:
// Start's error). It sends the Spec and waits until the launcher has
// exec'd its program (nil) or failed before (its error, which is also on
// the program's stderr); with startErr it only closes the pipes.
func (p *Pipes) Started(startErr error) error {
	if p == nil { // no launcher
		return startErr
	}
	for _, f := range p.child {
		f.Close() // the launcher has its copies
	}
	if startErr != nil {
		p.specW.Close()
		p.errR.Close()
		return startErr
	}
	werr := p.spec.Encode(p.specW)
	p.specW.Close()
	// The write end closes at the launcher's exec (close-on-exec) or exit.
	msg, _ := io.ReadAll(io.LimitReader(p.errR, 64<<10))
	p.errR.Close()
	if len(msg) > 0 {
		return errors.New(strings.TrimSpace(string(msg)))
	}
	if werr != nil {
		return fmt.Errorf("nslaunch: sending the spec: %w", werr)
	}
	return nil
}

// Command returns the command that launches s through launcher, and its
// Pipes (Started after Start). Stdio, SysProcAttr and the like are the
// caller's to set.
func Command(launcher []string, s *Spec) (*exec.Cmd, *Pipes, error) {
	if len(launcher) == 0 {
		return nil, nil, errors.New("nslaunch: no launcher command")
	}
	p, err := NewPipes(s)
	if err != nil {
		return nil, nil, err
	}
	args := LaunchArgs(launcher)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.ExtraFiles = p.ExtraFiles()
	return cmd, p, nil
}

// ReadFile reads a Spec from a file (the built-in command executor's
// per-task Spec, which the agent writes).
func ReadFile(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode(f)
}

// MergeEnv is base overridden by each later list, by name, in order of
// first appearance: what exec would see if the lists were concatenated, but
// with each name once (execve itself keeps duplicates, and programs differ
// in which one they read).
func MergeEnv(lists ...[]string) []string {
	idx := map[string]int{}
	var out []string
	for _, l := range lists {
		for _, kv := range l {
			k, _, _ := strings.Cut(kv, "=")
			if i, ok := idx[k]; ok {
				out[i] = kv
				continue
			}
			idx[k] = len(out)
			out = append(out, kv)
		}
	}
	return out
}

// lookPath finds file on the PATH of env, as seen from the current root.
func lookPath(file string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		return file, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found on PATH %s", file, path)
}
