package integration

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/internal/testimage"
)

// imageTask is a command task run in the MESOS container of image ref.
func imageTask(id string, o mesos.Offer, ref, shell string) mesos.TaskInfo {
	t := cmdTask(id, o, shell, 0.1, 32)
	mt := mesos.ContainerInfo_MESOS
	t.Container = &mesos.ContainerInfo{Type: &mt, Mesos: &mesos.ContainerInfo_MesosInfo{
		Image: &mesos.Image{Type: mesos.Image_DOCKER.Enum(), Docker: &mesos.Image_Docker{Name: ref}}}}
	return t
}

// Tasks run in the image they name, pulled from a registry the test
// serves: the image's marker and /etc/os-release (not the host's), its
// environment, the sandbox at /mnt/mesos/sandbox, a whiteout applied; a
// host volume and a persistent volume written inside are read outside; a
// second task reuses the cached layers (no blob fetched again); the
// image's own Cmd runs when the CommandInfo names no program; a missing
// image and a wrong credential fail TASK_FAILED,
// REASON_CONTAINER_LAUNCH_FAILED, naming the image.
func TestContainerImages(t *testing.T) {
	if why := nslaunch.Check(); why != "" {
		t.Skip("no containers on this host: " + why)
	}
	env := startImageCluster(t)
	fw, a, reg := env.fw, env.agent, env.reg
	o := env.volumeOffer(t)
	_, vols := reservedFor(o, "eng")
	first := imageTask("first", o, env.ref, `cat /marker.txt; echo; cat /etc/os-release; echo "$IMAGE_VAR $MESOS_SANDBOX $(pwd)";`+
		` test -e /etc/doomed || echo whiteout-applied; echo host-volume > /hostvol/from-image; echo persistent > data/f`)
	first.Resources = []mesos.Resource{engReservation(scalar("cpus", 0.5)), engReservation(scalar("mem", 64)), vols[0]}
	rw := mesos.RW
	first.Container.Volumes = []mesos.Volume{{ContainerPath: "/hostvol", HostPath: &env.hostVol, Mode: &rw}}
	if err := fw.call(launch(o, first)); err != nil {
		t.Fatal(err)
	}
	if st := fw.waitTerminal(t, "first"); st.GetState() != mesos.TASK_FINISHED {
		t.Fatalf("first: %v %v %q\nstdout: %s", st.GetState(), st.GetReason(), st.GetMessage(), taskStdout(a.Dir, "first"))
	}
	out := taskStdout(a.Dir, "first")
	for _, want := range []string{env.marker, testimage.OSRelease, "from-image " + nslaunch.SandboxPath + " " + nslaunch.SandboxPath, "whiteout-applied"} {
		if !strings.Contains(out, want) {
			t.Errorf("first's stdout lacks %q:\n%s", want, out)
		}
	}
	if host, _ := os.ReadFile("/etc/os-release"); len(host) > 0 && strings.Contains(out, string(host)) {
		t.Errorf("first printed the host's /etc/os-release")
	}
	if b, err := os.ReadFile(filepath.Join(env.hostVol, "from-image")); err != nil || string(b) != "host-volume\n" {
		t.Errorf("host volume file read outside: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(a.Dir, "volumes", "roles", "eng", "v1", "f")); err != nil || string(b) != "persistent\n" {
		t.Errorf("persistent volume file read outside: %q, %v", b, err)
	}

	pulled := reg.BlobGets.Load()
	o = fw.takeOfferFits(t, 0.2, 64)
	// The second task names no program: the image's Cmd (cat /marker.txt) runs.
	second := imageTask("second", o, env.ref, "")
	second.Command = &mesos.CommandInfo{Shell: boolPtr(false)}
	if err := fw.call(launch(o, second)); err != nil {
		t.Fatal(err)
	}
	if st := fw.waitTerminal(t, "second"); st.GetState() != mesos.TASK_FINISHED || !strings.Contains(taskStdout(a.Dir, "second"), env.marker) {
		t.Errorf("second: %v %q, stdout %q; want FINISHED printing the marker", st.GetState(), st.GetMessage(), taskStdout(a.Dir, "second"))
	}
	// A task with a user runs as that uid in the image, which need not know it.
	o = fw.takeOfferFits(t, 0.2, 64)
	asUser := imageTask("as-user", o, env.ref, "id -u; cat /etc/resolv.conf >/dev/null && echo resolv-ok")
	asUser.Command.User = strPtr("nobody")
	if err := fw.call(launch(o, asUser)); err != nil {
		t.Fatal(err)
	}
	if st := fw.waitTerminal(t, "as-user"); st.GetState() != mesos.TASK_FINISHED || !strings.Contains(taskStdout(a.Dir, "as-user"), "65534\nresolv-ok") {
		t.Errorf("as-user: %v %q, stdout %q; want FINISHED as uid 65534 with the host's resolv.conf", st.GetState(), st.GetMessage(), taskStdout(a.Dir, "as-user"))
	}
	if n := testcluster.Metric(a.Addr, "allot_agent_image_layer_pulls"); n != 2 {
		t.Errorf("allot_agent_image_layer_pulls = %v, want the image's 2 layers", n)
	}
	if again := reg.BlobGets.Load(); again != pulled {
		t.Errorf("the later tasks fetched %d blobs again; want the cached layers", again-pulled)
	}
	env.failures(t)
	containersReleased(t, a.Dir)
}

// imageEnv is TestContainerImages's world: a registry with the test image,
// one behind basic auth, an agent given a wrong credential for the latter,
// a host directory for a volume, and a framework of role eng.
type imageEnv struct {
	reg, private    *testimage.Registry
	ref, privRef    string
	marker, hostVol string
	agent           *testcluster.Agent
	fw              *sched
}

func startImageCluster(t *testing.T) *imageEnv {
	env := &imageEnv{marker: "marker-" + t.Name(), hostVol: t.TempDir()}
	env.reg = testimage.StartRegistry(t, "", "")
	env.ref = env.reg.Push(t, "test/busybox:1", testimage.Busybox(t, env.marker, 0))
	env.private = testimage.StartRegistry(t, "alice", "s3cret")
	env.privRef = env.private.Push(t, "private/busybox:1", testimage.Busybox(t, "private", 0))
	conf := filepath.Join(t.TempDir(), "docker.json")
	wrong := base64.StdEncoding.EncodeToString([]byte("alice:guess"))
	os.WriteFile(conf, []byte(`{"auths":{"`+env.private.Host+`":{"auth":"`+wrong+`"}}}`), 0o600)
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 0, MasterFlags: []string{"--log-level", "debug"},
		AgentFlags: append(append([]string{}, agentFlags...), "--docker-config", conf)})}
	env.agent = c.AddAgent(testcluster.DefaultResources)
	unmountOnCleanup(t, env.agent.Dir)
	c.WaitAgents(1)
	doc, err := agentState(env.agent.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ci, _ := doc["container_images"].(map[string]any)
	if ci["enabled"] != true || ci["backend"] == "" || ci["backend_reason"] == "" {
		t.Fatalf("agent /state container_images = %v, want enabled with a backend and why", ci)
	}
	t.Logf("rootfs backend: %v (%v)", ci["backend"], ci["backend_reason"])
	role := "eng"
	env.fw = subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "images", Role: &role})
	return env
}

// volumeOffer reserves for eng, creates the persistent volume v1 and
// returns the offer holding it.
func (env *imageEnv) volumeOffer(t *testing.T) mesos.Offer {
	fw := env.fw
	o := fw.takeOffer(t, "")
	accept(t, fw, o, mesos.Offer_Operation{Type: mesos.Offer_Operation_RESERVE, Reserve: &mesos.Offer_Operation_Reserve{
		Resources: []mesos.Resource{engReservation(scalar("cpus", 0.5)), engReservation(scalar("mem", 64)), engReservation(scalar("disk", 100))}}})
	o = fw.takeOfferWhere(t, "an offer of eng's disk", func(o mesos.Offer) bool { got, _ := reservedFor(o, "eng"); return got["disk"] == 100 })
	accept(t, fw, o, mesos.Offer_Operation{Type: mesos.Offer_Operation_CREATE, Create: &mesos.Offer_Operation_Create{Volumes: []mesos.Resource{engVolume(64)}}})
	return fw.takeOfferWhere(t, "an offer of the volume", hasVolume)
}

// failures launches a task in an image the registry lacks, one in the
// private registry's (the agent's credential is wrong) and one whose
// program the image lacks: all fail TASK_FAILED,
// REASON_CONTAINER_LAUNCH_FAILED, naming the image or the program.
func (env *imageEnv) failures(t *testing.T) {
	o := env.fw.takeOfferFits(t, 0.3, 96)
	missing := env.reg.Host + "/test/nosuch:1"
	noProg := imageTask("no-program", o, env.ref, "")
	noProg.Command = &mesos.CommandInfo{Shell: boolPtr(false), Value: strPtr("/no/such/program")}
	if err := env.fw.call(launch(o, imageTask("missing", o, missing, "true"), imageTask("private", o, env.privRef, "true"), noProg)); err != nil {
		t.Fatal(err)
	}
	for id, image := range map[string]string{"missing": missing, "private": env.privRef, "no-program": "exec /no/such/program"} {
		st := env.fw.waitTerminal(t, id)
		if st.GetState() != mesos.TASK_FAILED || st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || !strings.Contains(st.GetMessage(), image) {
			t.Errorf("%s: %v %v %q; want TASK_FAILED REASON_CONTAINER_LAUNCH_FAILED naming %s", id, st.GetState(), st.GetReason(), st.GetMessage(), image)
		}
		t.Logf("%s: %s", id, st.GetMessage())
	}
}

// containersReleased waits until every container's rootfs is released
// (its executor gone) and checks no mount is left under the agent's dir.
func containersReleased(t testing.TB, agentDir string) {
	testcluster.WaitFor(t, 60*time.Second, "the containers' runtime directories to be released", func() bool {
		left, _ := os.ReadDir(filepath.Join(agentDir, "containers"))
		return len(left) == 0
	})
	if mounts, _ := os.ReadFile("/proc/self/mounts"); strings.Contains(string(mounts), agentDir) {
		t.Errorf("mounts left under the agent's work dir:\n%s", mounts)
	}
}

// An agent whose --isolation leaves out the image isolators fails an image
// task TASK_FAILED, REASON_CONTAINER_LAUNCH_FAILED, naming what is missing;
// it never runs the command on the host.
func TestContainerImagesUnavailable(t *testing.T) {
	c := isolatedCluster(t, "posix/cpu,posix/mem")
	doc, err := agentState(c.Agents[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	if ci, _ := doc["container_images"].(map[string]any); ci["enabled"] != false || !strings.Contains(ci["reason"].(string), "filesystem/linux") {
		t.Errorf("agent /state container_images = %v, want disabled naming filesystem/linux", ci)
	}
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "images"})
	o := fw.takeOffer(t, "")
	marker := filepath.Join(t.TempDir(), "ran-on-host")
	if err := fw.call(launch(o, imageTask("img", o, "127.0.0.1:1/none:1", "touch "+marker))); err != nil {
		t.Fatal(err)
	}
	st := fw.waitTerminal(t, "img")
	if st.GetState() != mesos.TASK_FAILED || st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED ||
		!strings.Contains(st.GetMessage(), "--isolation lacks filesystem/linux and docker/runtime") {
		t.Errorf("img: %v %v %q; want TASK_FAILED REASON_CONTAINER_LAUNCH_FAILED naming the missing isolators", st.GetState(), st.GetReason(), st.GetMessage())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the image task's command ran on the host")
	}
}

// waitTerminal waits for task id's first terminal update and returns it.
func (s *sched) waitTerminal(t testing.TB, id string) mesos.TaskStatus {
	t.Helper()
	var st mesos.TaskStatus
	testcluster.WaitFor(t, 60*time.Second, "task "+id+" to end", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, u := range s.updates {
			if u.TaskID.Value == id && taskstate.IsTerminal(u.GetState()) {
				st = u
				return true
			}
		}
		return false
	})
	return st
}

// unmountOnCleanup detaches, when t ends, every mount left under dir (the
// rootfs of a container whose release a failing test did not wait for), so
// that the test's directories can be removed.
func unmountOnCleanup(t testing.TB, dir string) {
	t.Cleanup(func() {
		b, _ := os.ReadFile("/proc/self/mounts")
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[1], dir+"/") {
				syscall.Unmount(f[1], syscall.MNT_DETACH)
			}
		}
	})
}
