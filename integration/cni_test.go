package integration

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/agent/nslaunch"
	"github.com/allot-sched/allot/internal/testcluster"
	"github.com/allot-sched/allot/internal/testimage"
)

// TestCNIBridgeTask runs, in a network namespace of the test's own, an
// agent with one CNI network (Debian's bridge + host-local + portmap
// plugins on a bridge the test names): a command task that names the
// network gets its own namespace and an address in the network's subnet,
// reported in its RUNNING update and in the master's /state; its host
// name is its container id; its HTTP health check, run in its namespace,
// passes; busybox httpd in it answers on the host port mapped to it, also
// after the agent was killed and restarted; killed then, its namespace,
// address and port rules go. A task that names a network the agent does
// not have fails TASK_FAILED REASON_CONTAINER_LAUNCH_FAILED naming it and
// the agent's networks.
func TestCNIBridgeTask(t *testing.T) {
	if !testcluster.InOwnNetNS(t) {
		return
	}
	c, ipam := cniCluster(t)
	fw := subscribe(t, c.MasterAddr, checkpointing("cni"))
	o := fw.takeOffer(t, "")
	hostPort := firstPort(t, o)
	mesosType := mesos.ContainerInfo_MESOS
	web := cmdTask("web", o, "hostname; mkdir -p www && echo hello-cni > www/index.html && exec /bin/busybox httpd -f -p 8080 -h www", 0.1, 32)
	web.Resources = append(web.Resources, portResource(hostPort))
	web.Container = &mesos.ContainerInfo{Type: &mesosType, NetworkInfos: []mesos.NetworkInfo{{Name: strPtr("testnet"),
		PortMappings: []mesos.NetworkInfo_PortMapping{{HostPort: uint32(hostPort), ContainerPort: 8080}}}}}
	// Its HTTP check reaches port 8080 in the task's namespace, not the
	// host's (startup failures fall in the grace period).
	index, grace := "/index.html", 30.0
	web.HealthCheck = quickCheck(mesos.HealthCheck{Type: mesos.HealthCheck_HTTP, HTTP: &mesos.HealthCheck_HTTPCheckInfo{Port: 8080, Path: &index}})
	web.HealthCheck.GracePeriodSeconds = &grace
	lost := cmdTask("lost", o, "true", 0.1, 32)
	lost.Container = &mesos.ContainerInfo{Type: &mesosType, NetworkInfos: []mesos.NetworkInfo{{Name: strPtr("nosuchnet")}}}
	if err := fw.call(launch(o, web, lost)); err != nil {
		t.Fatal(err)
	}

	st := fw.waitState(t, "lost", mesos.TASK_FAILED)
	if st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED || !strings.Contains(st.GetMessage(), `"nosuchnet"`) || !strings.Contains(st.GetMessage(), "testnet") {
		t.Errorf("unknown network: %v %q, want REASON_CONTAINER_LAUNCH_FAILED naming nosuchnet and testnet", st.GetReason(), st.GetMessage())
	}
	checkCNITaskRunning(t, c, fw, fw.waitState(t, "web", mesos.TASK_RUNNING), hostPort)

	// kill -9 the agent and start it again: the task keeps its network,
	// and the restarted agent, which knows it from its checkpoint, takes
	// it off the network when it ends.
	a := c.Agents[0]
	a.Kill(syscall.SIGKILL)
	c.StartAgent(a)
	waitAgentRegistered(t, a.Addr)
	if got := httpGet("http://" + net.JoinHostPort("10.79.0.1", fmt.Sprint(hostPort)) + "/index.html"); got != "hello-cni" {
		t.Errorf("after the agent's restart, through the mapped port: %q, want hello-cni", got)
	}
	if err := fw.call(calls.Kill("web", o.AgentID.Value)); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "web", mesos.TASK_KILLED)
	checkCNITaskGone(t, c, ipam, hostPort)
}

// cniCluster starts a master and an agent with the network "testnet"
// (bridge allotcnit0, 10.79.0.0/24, host-local leases in the returned
// directory, portmap), or skips naming what the host lacks.
func cniCluster(t *testing.T) (*cluster, string) {
	t.Helper()
	for _, need := range []string{"/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/portmap", "/bin/busybox"} {
		if _, err := os.Stat(need); err != nil {
			t.Skipf("needs %s (containernetworking-plugins, busybox-static): %v", need, err)
		}
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("needs iptables (the bridge and portmap plugins run it)")
	}
	confs, ipam := t.TempDir(), t.TempDir()
	conf := fmt.Sprintf(`{"cniVersion":"1.0.0","name":"testnet","plugins":[
	  {"type":"bridge","bridge":"allotcnit0","isGateway":true,"ipMasq":false,
	   "ipam":{"type":"host-local","subnet":"10.79.0.0/24","dataDir":%q,"routes":[{"dst":"0.0.0.0/0"}]}},
	  {"type":"portmap","capabilities":{"portMappings":true}}]}`, ipam)
	if err := os.WriteFile(filepath.Join(confs, "testnet.conflist"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &cluster{testcluster.New(t, testcluster.Config{Bin: allotBin, Agents: 1,
		MasterFlags: []string{"--log-level", "debug"},
		AgentFlags: append(append([]string{}, agentFlags...),
			"--network-cni-config-dir", confs, "--network-cni-plugins-dir", "/usr/lib/cni")})}
	// A test that fails half way leaves namespace handles (and rootfs)
	// mounted under the agent's work dir; its removal needs them gone.
	unmountOnCleanup(t, c.Agents[0].Dir)
	return c, ipam
}

// checkCNITaskRunning checks task web, running (st its RUNNING update):
// its address on testnet in the update and in /state, httpd answering
// through hostPort and at its own address, its host name, its health and
// the agent's metrics.
func checkCNITaskRunning(t *testing.T, c *cluster, fw *sched, st mesos.TaskStatus, hostPort int) {
	t.Helper()
	cs := st.GetContainerStatus()
	if cs == nil || len(cs.NetworkInfos) != 1 || len(cs.NetworkInfos[0].IPAddresses) != 1 || cs.ContainerID == nil {
		t.Fatalf("RUNNING update's container_status = %+v, want the container and one address", cs)
	}
	ip := cs.NetworkInfos[0].IPAddresses[0]
	if !strings.HasPrefix(ip.GetIPAddress(), "10.79.0.") || ip.GetProtocol() != mesos.IPv4 || cs.NetworkInfos[0].GetName() != "testnet" {
		t.Fatalf("address %+v on %q, want IPv4 10.79.0.x on testnet", ip, cs.NetworkInfos[0].GetName())
	}
	var body string
	testcluster.WaitFor(t, 30*time.Second, "httpd in the task to answer on host port "+fmt.Sprint(hostPort), func() bool {
		body = httpGet("http://" + net.JoinHostPort("10.79.0.1", fmt.Sprint(hostPort)) + "/index.html")
		return body != ""
	})
	t.Logf("task web: container %s, %s on %s, host port %d answers %q", cs.ContainerID.Value, ip.GetIPAddress(), cs.NetworkInfos[0].GetName(), hostPort, body)
	if body != "hello-cni" {
		t.Errorf("through the mapped port: %q, want hello-cni", body)
	}
	if got := httpGet("http://" + net.JoinHostPort(ip.GetIPAddress(), "8080") + "/index.html"); got != "hello-cni" {
		t.Errorf("at the task's own address: %q, want hello-cni", got)
	}
	if out := taskStdout(c.Agents[0].Dir, "web"); !strings.Contains(out, cs.ContainerID.Value) {
		t.Errorf("task's hostname: stdout %q, want its container id %s", out, cs.ContainerID.Value)
	}
	agentAddr := c.Agents[0].Addr
	doc, _ := agentState(agentAddr)
	if cni, _ := doc["cni"].(map[string]any); cni["enabled"] != true || fmt.Sprint(cni["networks"]) != "[testnet]" || cni["containers"] != 1.0 {
		t.Errorf("agent /state cni = %v, want enabled, networks [testnet], one container", doc["cni"])
	}
	if n, e := testcluster.Metric(agentAddr, "allot_agent_cni_containers"), testcluster.Metric(agentAddr, "allot_agent_cni_attach_errors_total"); n != 1 || e != 1 {
		t.Errorf("agent metrics: %v containers on CNI networks, %v failed attaches; want 1 and 1 (web and nosuchnet)", n, e)
	}
	fw.waitTrail(t, "web", "to be reported healthy", func(tr []string) bool { return slices.Contains(tr, "RUNNING+") })
	if !stateShowsAddress(c, "web", ip.GetIPAddress()) {
		t.Errorf("master /state: task web's statuses lack container_status with %s", ip.GetIPAddress())
	}
}

// checkCNITaskGone checks that the ended task left nothing: no namespace,
// no address lease in ipam, no rule for hostPort, none counted.
func checkCNITaskGone(t *testing.T, c *cluster, ipam string, hostPort int) {
	t.Helper()
	nsDir := filepath.Join(c.Agents[0].Dir, "cni", "containers")
	testcluster.WaitFor(t, 30*time.Second, "the task's network namespace to go", func() bool {
		ents, err := os.ReadDir(nsDir)
		return err == nil && len(ents) == 0
	})
	if n := testcluster.Metric(c.Agents[0].Addr, "allot_agent_cni_containers"); n != 0 {
		t.Errorf("agent metrics: %v containers on CNI networks after the task ended, want 0", n)
	}
	if out, _ := exec.Command("iptables", "-t", "nat", "-S").CombinedOutput(); strings.Contains(string(out), fmt.Sprint(hostPort)) {
		t.Errorf("port rules left after the task ended:\n%s", out)
	}
	if leases, _ := filepath.Glob(filepath.Join(ipam, "testnet", "10.79.*")); len(leases) != 0 {
		t.Errorf("address leases left after the task ended: %v", leases)
	}
}

func firstPort(t *testing.T, o mesos.Offer) int {
	t.Helper()
	for _, r := range o.Resources {
		if r.Name == "ports" && r.Ranges != nil && len(r.Ranges.Range) > 0 {
			return int(r.Ranges.Range[0].Begin)
		}
	}
	t.Fatalf("offer without ports: %+v", o.Resources)
	return 0
}

func portResource(p int) mesos.Resource {
	return mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(),
		Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: uint64(p), End: uint64(p)}}}}
}

// httpGet is the trimmed body of a 200 answer to GET url, "" otherwise.
func httpGet(url string) string {
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != 200 {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// stateShowsAddress reports whether the master's /state has ip in task
// id's statuses (container_status.network_infos).
func stateShowsAddress(c *cluster, id, ip string) bool {
	for _, f := range c.state().Frameworks {
		for _, tk := range append(f.Tasks, f.CompletedTasks...) {
			if tk.ID != id {
				continue
			}
			for _, s := range tk.Statuses {
				if cs := s.ContainerStatus; cs != nil {
					for _, n := range cs.NetworkInfos {
						for _, a := range n.IPAddresses {
							if a.IPAddress == ip {
								return true
							}
						}
					}
				}
			}
		}
	}
	return false
}

// TestCNIImageTask: a task in an image (from a registry the test serves)
// on the test's CNI network has the network's address on eth0, its
// container id as host name in /etc/hostname, and its /etc/hosts naming
// it at that address, all inside the image's filesystem.
func TestCNIImageTask(t *testing.T) {
	if !testcluster.InOwnNetNS(t) {
		return
	}
	if why := nslaunch.Check(); why != "" {
		t.Skip("no containers on this host: " + why)
	}
	reg := testimage.StartRegistry(t, "", "")
	ref := reg.Push(t, "test/busybox:1", testimage.Busybox(t, "cni-image-marker", 0))
	c, _ := cniCluster(t)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "cni-image"})
	o := fw.takeOffer(t, "")
	boxed := imageTask("boxed", o, ref, "cat /marker.txt; echo; cat /etc/hostname /etc/hosts; /bin/busybox ip -4 addr show eth0")
	boxed.Container.NetworkInfos = []mesos.NetworkInfo{{Name: strPtr("testnet")}}
	if err := fw.call(launch(o, boxed)); err != nil {
		t.Fatal(err)
	}
	st := fw.waitState(t, "boxed", mesos.TASK_RUNNING)
	cs := st.GetContainerStatus()
	if cs == nil || cs.ContainerID == nil || len(cs.NetworkInfos) != 1 || len(cs.NetworkInfos[0].IPAddresses) != 1 {
		t.Fatalf("RUNNING update's container_status = %+v, want the container and one address", cs)
	}
	ip := cs.NetworkInfos[0].IPAddresses[0].GetIPAddress()
	if end := fw.waitTerminal(t, "boxed"); end.GetState() != mesos.TASK_FINISHED {
		t.Fatalf("boxed: %v %v %q\nstdout: %s", end.GetState(), end.GetReason(), end.GetMessage(), taskStdout(c.Agents[0].Dir, "boxed"))
	}
	out := taskStdout(c.Agents[0].Dir, "boxed")
	t.Logf("task boxed (container %s, %s) printed:\n%s", cs.ContainerID.Value, ip, out)
	for _, want := range []string{"cni-image-marker", cs.ContainerID.Value + "\n", ip + " " + cs.ContainerID.Value, "inet " + ip + "/24"} {
		if !strings.Contains(out, want) {
			t.Errorf("boxed's stdout lacks %q:\n%s", want, out)
		}
	}
	containersReleased(t, c.Agents[0].Dir)
}
