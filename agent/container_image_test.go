package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"

	"github.com/allot-sched/allot/agent/imagestore"
	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/internal/testimage"
)

// Mesos's docker/runtime table: the CommandInfo's shell, value and
// arguments against the image's Entrypoint and Cmd.
func TestDockerArgv(t *testing.T) {
	f := false
	sh := func(v string) *mesos.CommandInfo { return &mesos.CommandInfo{Value: &v} }
	argv := func(v string, args ...string) *mesos.CommandInfo {
		ci := &mesos.CommandInfo{Shell: &f, Arguments: args}
		if v != "" {
			ci.Value = &v
		}
		return ci
	}
	ep, cmd := []string{"/ep", "-x"}, []string{"c1", "c2"}
	tests := []struct {
		name       string
		ci         *mesos.CommandInfo
		entrypoint []string
		cmd        []string
		want       []string
		wantErr    string
	}{
		{"shell ignores the image", sh("echo hi"), ep, cmd, []string{"/bin/sh", "-c", "echo hi"}, ""},
		{"shell without value", &mesos.CommandInfo{}, ep, cmd, nil, "needs a value"},
		{"value ignores the image", argv("/bin/cat", "cat", "f"), ep, cmd, []string{"/bin/cat", "f"}, ""},
		{"entrypoint and cmd", argv(""), ep, cmd, []string{"/ep", "-x", "c1", "c2"}, ""},
		{"arguments replace cmd after the entrypoint", argv("", "a1", "a2"), ep, cmd, []string{"/ep", "-x", "a1", "a2"}, ""},
		{"cmd alone", argv(""), nil, cmd, []string{"c1", "c2"}, ""},
		{"arguments after cmd[0]", argv("", "a1", "a2"), nil, cmd, []string{"c1", "a1", "a2"}, ""},
		{"entrypoint alone", argv(""), ep, nil, []string{"/ep", "-x"}, ""},
		{"nothing", argv(""), nil, nil, nil, "must name the program"},
		{"arguments but no program", argv("", "a1"), nil, nil, nil, "must name the program"},
	}
	for _, tc := range tests {
		got, err := dockerArgv(tc.ci, imagestore.Runtime{Entrypoint: tc.entrypoint, Cmd: tc.cmd})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %q, %v; want error %q", tc.name, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestVolumeMounts(t *testing.T) {
	sandbox, host := t.TempDir(), t.TempDir()
	ro, rw := mesos.RO, mesos.RW
	a := &Agent{cfg: Config{WorkDir: t.TempDir()}, log: zerolog.Nop()}
	mk := func(vols ...mesos.Volume) *executor {
		mt := mesos.ContainerInfo_MESOS
		return &executor{sandbox: sandbox, tasks: map[string]*agentTask{}, container: &mesos.ContainerInfo{Type: &mt, Volumes: vols}}
	}
	got, err := a.volumeMounts(mk(
		mesos.Volume{ContainerPath: "/data", HostPath: &host, Mode: &ro},
		mesos.Volume{ContainerPath: "cache", HostPath: strPtr("scratch"), Mode: &rw},
		mesos.Volume{ContainerPath: "/src", Mode: &rw, Source: &mesos.Volume_Source{Type: mesos.Volume_Source_SANDBOX_PATH,
			SandboxPath: &mesos.Volume_Source_SandboxPath{Type: mesos.Volume_Source_SandboxPath_SELF, Path: "src"}}},
	))
	if err != nil {
		t.Fatal(err)
	}
	want := []nslaunch.Mount{{Source: host, Target: "/data", ReadOnly: true},
		{Source: filepath.Join(sandbox, "scratch"), Target: nslaunch.SandboxPath + "/cache"},
		{Source: filepath.Join(sandbox, "src"), Target: "/src"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mounts %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		v       mesos.Volume
		wantErr string
	}{
		{mesos.Volume{ContainerPath: "/x", HostPath: strPtr("/no/such/dir")}, "host path"},
		{mesos.Volume{ContainerPath: "/x", HostPath: strPtr("../../etc")}, "leaves the sandbox"},
		{mesos.Volume{ContainerPath: "/x", Image: &mesos.Image{}}, "image volumes"},
		{mesos.Volume{ContainerPath: "/x", Source: &mesos.Volume_Source{Type: mesos.Volume_Source_DOCKER_VOLUME}}, "DOCKER_VOLUME is not supported"},
	} {
		if _, err := a.volumeMounts(mk(tc.v)); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%+v: %v, want %q", tc.v, err, tc.wantErr)
		}
	}
}

// An agent that cannot make containers (here: no image isolators, or the
// mount namespace check failed) fails an image container naming the image
// and what is missing, before anything starts.
func TestImageSpecUnavailable(t *testing.T) {
	for _, iso := range []string{"posix", "cgroups,filesystem/linux"} {
		a := &Agent{cfg: Config{WorkDir: t.TempDir(), Isolation: iso}, log: zerolog.Nop()}
		if err := a.initImages(); err != nil {
			t.Fatal(err)
		}
		mt := mesos.ContainerInfo_MESOS
		ex := &executor{container: &mesos.ContainerInfo{Type: &mt, Mesos: &mesos.ContainerInfo_MesosInfo{
			Image: &mesos.Image{Type: mesos.Image_DOCKER.Enum(), Docker: &mesos.Image_Docker{Name: "busybox:1"}}}}}
		err := a.imageSpec(ex, &nslaunch.Spec{})
		if err == nil || !strings.Contains(err.Error(), `"busybox:1"`) || !strings.Contains(err.Error(), "docker/runtime") {
			t.Errorf("--isolation=%s: %v; want an error naming the image and docker/runtime", iso, err)
		}
		if _, err := os.Stat(filepath.Join(a.cfg.WorkDir, "store")); err == nil {
			t.Errorf("--isolation=%s made an image store", iso)
		}
	}
	a := &Agent{images: imageProvisioner{missing: "mount namespaces need root (CAP_SYS_ADMIN); the agent runs as uid 1000"}}
	mt := mesos.ContainerInfo_MESOS
	ex := &executor{container: &mesos.ContainerInfo{Type: &mt, Mesos: &mesos.ContainerInfo_MesosInfo{
		Image: &mesos.Image{Type: mesos.Image_DOCKER.Enum(), Docker: &mesos.Image_Docker{Name: "busybox:1"}}}}}
	if err := a.imageSpec(ex, &nslaunch.Spec{}); err == nil || !strings.Contains(err.Error(), "mount namespaces need root") {
		t.Errorf("without mount namespaces: %v", err)
	}
}

// A COMMAND health check of a task in an image runs in its container: it
// sees the image's files and the sandbox at /mnt/mesos/sandbox, not the
// host's files.
func TestContainedCommandCheck(t *testing.T) {
	if why := nslaunch.Check(); why != "" {
		t.Skip("no containers here: " + why)
	}
	bb, err := os.ReadFile("/bin/busybox")
	if err != nil {
		t.Skip("needs busybox-static at /bin/busybox: " + err.Error())
	}
	root, sandbox := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(root, "bin"), 0o755)
	os.WriteFile(filepath.Join(root, "bin", "busybox"), bb, 0o755)
	for _, n := range []string{"sh", "test"} {
		os.Symlink("busybox", filepath.Join(root, "bin", n))
	}
	os.WriteFile(filepath.Join(root, "image-only"), nil, 0o644)
	os.WriteFile(filepath.Join(sandbox, "ready"), nil, 0o644)
	spec := &nslaunch.Spec{Rootfs: root, Dir: nslaunch.SandboxPath, Env: []string{"PATH=/bin"},
		Argv: []string{"true"}, Mounts: []nslaunch.Mount{{Source: sandbox, Target: nslaunch.SandboxPath}}}
	host, _ := os.Executable()
	for _, tc := range []struct {
		check string
		pass  bool
	}{
		{"test -e /image-only && test -e ready && test \"$PWD\" = " + nslaunch.SandboxPath, true},
		{"test -e " + host, false}, // the host's files are out of reach
	} {
		p := commandProbe{cmd: &mesos.CommandInfo{Value: strPtr(tc.check)}, dir: sandbox, env: spec.Env, launch: spec}
		if err := p.probe(context.Background()); (err == nil) != tc.pass {
			t.Errorf("check %q: %v; want pass %v", tc.check, err, tc.pass)
		}
	}
}

// A custom executor whose ExecutorInfo.container names an image runs
// entirely in it, through the launcher: the image's files, the sandbox at
// /mnt/mesos/sandbox, the executor's MESOS_ variables over the image's
// environment and none of the agent's own. Its rootfs is released with
// the container; a restarted agent keeps a live container's and releases
// a stale one's.
func TestCustomExecutorInImage(t *testing.T) {
	if why := nslaunch.Check(); why != "" {
		t.Skip("no containers here: " + why)
	}
	reg := testimage.StartRegistry(t, "", "")
	ref := reg.Push(t, "test/busybox:1", testimage.Busybox(t, "exec-marker", 0))
	work := t.TempDir()
	a := &Agent{cfg: Config{WorkDir: work, Isolation: "auto", ExecutorCommand: []string{"/bin/allot", "executor"},
		LauncherCommand: []string{os.Args[0], "container-launch"}}, log: zerolog.Nop(), stop: make(chan struct{})}
	if err := a.initImages(); err != nil {
		t.Fatal(err)
	}
	f := false
	mt := mesos.ContainerInfo_MESOS
	ex := &executor{id: "e1", containerID: "c1", sandbox: t.TempDir(), tasks: map[string]*agentTask{},
		container: &mesos.ContainerInfo{Type: &mt, Mesos: &mesos.ContainerInfo_MesosInfo{
			Image: &mesos.Image{Type: mesos.Image_DOCKER.Enum(), Docker: &mesos.Image_Docker{Name: ref}}}},
		containerCommand: &mesos.CommandInfo{Shell: &f, Value: strPtr("/bin/sh"),
			Arguments: []string{"sh", "-c", `cat /marker.txt > out; echo "$IMAGE_VAR $MESOS_EXECUTOR_ID $HOST_ONLY" >> out`}}}
	t.Setenv("HOST_ONLY", "leaked")
	lc, err := a.prepareContainer(ex, "/bin/sh", []string{"sh"}, a.hostEnv(nil), []string{"MESOS_EXECUTOR_ID=e1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lc.cred != nil || len(lc.extraFiles) != 2 || !strings.HasSuffix(strings.Join(lc.argv, " "), "container-launch --spec-fd 3 --err-fd 4") {
		t.Fatalf("launch %+v; want the launcher as the agent's user with the Spec's pipe", lc)
	}
	cmd := exec.Command(lc.path, lc.argv[1:]...)
	cmd.ExtraFiles = lc.extraFiles
	if out, err := runLaunched(cmd, lc); err != nil {
		t.Fatalf("executor: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ex.sandbox, "out")); string(b) != "exec-markerfrom-image e1 \n" {
		t.Errorf("executor wrote %q", b)
	}
	rootfs := filepath.Join(a.containerDir("c1"), "rootfs")
	// A restart: c1 lives on, c2 belonged to a run that is over.
	if _, err := a.images.store.Provision(mustGet(t, a, ref), a.containerDir("c2")); err != nil {
		t.Fatal(err)
	}
	a.recoverContainerDirs(map[string]bool{"c1": true})
	if _, err := os.Stat(filepath.Join(rootfs, "marker.txt")); err != nil {
		t.Errorf("a live container's rootfs was released: %v", err)
	}
	if _, err := os.Stat(a.containerDir("c2")); err == nil {
		t.Error("a stale container's directory was kept")
	}
	a.releaseContainer("c1")
	if _, err := os.Stat(a.containerDir("c1")); err == nil {
		t.Error("the container's directory outlived its release")
	}
}

func runLaunched(cmd *exec.Cmd, lc *containerLaunch) (string, error) {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := lc.start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	return out.String(), err
}

func mustGet(t *testing.T, a *Agent, ref string) *imagestore.Image {
	img, err := a.images.store.Get(context.Background(), ref, true)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// An image allot would not run (the default executor's, a custom
// executor's task's own) is refused rather than silently left out; a
// command task's, a custom executor's and a task group's tasks' are run.
func TestUnsupportedImage(t *testing.T) {
	mt := mesos.ContainerInfo_MESOS
	img := &mesos.ContainerInfo{Type: &mt, Mesos: &mesos.ContainerInfo_MesosInfo{
		Image: &mesos.Image{Type: mesos.Image_DOCKER.Enum(), Docker: &mesos.Image_Docker{Name: "busybox"}}}}
	withImage := mesos.TaskInfo{TaskID: mesos.TaskID{Value: "t"}, Container: img}
	plain := mesos.TaskInfo{TaskID: mesos.TaskID{Value: "p"}}
	tests := []struct {
		name string
		o    runOrder
		want string
	}{
		{"command task", runOrder{command: true, commandTask: true, tasks: []mesos.TaskInfo{withImage}}, ""},
		{"custom executor in an image", runOrder{exInfo: mesos.ExecutorInfo{Container: img}, tasks: []mesos.TaskInfo{plain}}, ""},
		{"custom executor's task", runOrder{tasks: []mesos.TaskInfo{withImage}}, "give the image to the ExecutorInfo"},
		{"task group's task", runOrder{command: true, tasks: []mesos.TaskInfo{plain, withImage}}, ""},
		{"task group's executor", runOrder{command: true, exInfo: mesos.ExecutorInfo{Container: img}, tasks: []mesos.TaskInfo{plain}}, "the default executor runs on the host"},
		{"task group without images", runOrder{command: true, tasks: []mesos.TaskInfo{plain}}, ""},
	}
	for _, tc := range tests {
		got := unsupportedImage(&tc.o)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
