package cni

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// inOwnNetNS runs the calling test again in a child test binary inside a
// new network namespace (unshare -n), so that the bridges, addresses and
// iptables rules the plugins make are that namespace's and go with it,
// never the host's. It reports whether the caller is that child, which
// then does the work.
func inOwnNetNS(t *testing.T) bool {
	t.Helper()
	const env = "ALLOT_CNI_TEST_NETNS"
	if os.Getenv(env) == t.Name() {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: network namespaces and CNI plugins; running as uid", os.Geteuid())
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("needs unshare(1) to run in a network namespace of its own")
	}
	cmd := exec.Command(unshare, "-n", os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("in a network namespace of its own:\n%s", out)
	if err != nil {
		t.Fatalf("the test in its network namespace: %v", err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip("skipped in its network namespace (see the log)")
	}
	return false
}

// realPlugins is the plugin directory of Debian's containernetworking-plugins,
// or a skip saying what is missing.
func realPlugins(t *testing.T) string {
	t.Helper()
	dir := "/usr/lib/cni"
	for _, p := range []string{"bridge", "host-local", "portmap"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Skipf("needs the CNI plugin %s in %s (Debian's containernetworking-plugins): %v", p, dir, err)
		}
	}
	if _, err := exec.LookPath("iptables"); err != nil {
		t.Skip("needs iptables (the bridge and portmap plugins run it)")
	}
	return dir
}

// testNetwork writes a bridge + host-local + portmap network named name
// on bridge br with subnet; it returns the directory where host-local
// keeps the network's leases, the test's own.
func testNetwork(t *testing.T, confDir, name, br, subnet string) string {
	t.Helper()
	ipam := t.TempDir()
	writeConf(t, confDir, name+".conflist", fmt.Sprintf(`{"cniVersion":"1.0.0","name":%q,"plugins":[
	  {"type":"bridge","bridge":%q,"isGateway":true,"ipMasq":false,
	   "ipam":{"type":"host-local","subnet":%q,"dataDir":%q,"routes":[{"dst":"0.0.0.0/0"}]}},
	  {"type":"portmap","capabilities":{"portMappings":true}}]}`, name, br, subnet, ipam))
	return filepath.Join(ipam, name)
}

// leases are the addresses host-local has handed out in dir.
func leases(dir string) []string {
	var out []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if net.ParseIP(e.Name()) != nil {
			out = append(out, e.Name())
		}
	}
	return out
}

// A container on a bridge network: its own namespace, an address in the
// network's subnet, its port mapped on the host, reported as Mesos does;
// after a restart the agent knows it again; detached, the namespace,
// the address lease and the port's rules are gone.
func TestAttachBridgeWithPortMapping(t *testing.T) {
	if !inOwnNetNS(t) {
		return
	}
	plugins := realPlugins(t)
	if err := exec.Command("ip", "link", "set", "lo", "up").Run(); err != nil {
		t.Skipf("needs ip(8) to set lo up: %v", err)
	}
	confs, state := t.TempDir(), t.TempDir()
	ipam := testNetwork(t, confs, "testnet", "allotcni0", "10.77.0.0/24")
	newManager := func() *Manager {
		m, err := New(Config{ConfigDir: confs, PluginsDir: plugins, StateDir: state, Log: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := newManager()
	// A test that fails half way still lets go of the namespace, whose
	// mount would keep the temporary directory from being removed.
	t.Cleanup(func() { m.Detach(context.Background(), "c1") })
	name := "testnet"
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	at, err := m.Attach(ctx, "c1", []mesos.NetworkInfo{{Name: &name,
		PortMappings: []mesos.NetworkInfo_PortMapping{{HostPort: 18080, ContainerPort: 8080}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(at.NetworkInfos) != 1 || len(at.NetworkInfos[0].IPAddresses) != 1 {
		t.Fatalf("network infos %+v", at.NetworkInfos)
	}
	ip := at.NetworkInfos[0].IPAddresses[0]
	if !strings.HasPrefix(ip.GetIPAddress(), "10.77.0.") || ip.GetProtocol() != mesos.IPv4 || at.NetworkInfos[0].GetName() != "testnet" {
		t.Fatalf("address %+v, want IPv4 10.77.0.x on testnet", ip)
	}
	if len(at.NetworkInfos[0].PortMappings) != 1 {
		t.Errorf("the NetworkInfo as asked (port mappings) should be reported back: %+v", at.NetworkInfos[0])
	}
	if l := leases(ipam); len(l) != 1 || l[0] != ip.GetIPAddress() {
		t.Fatalf("host-local leases %v, want %s", l, ip.GetIPAddress())
	}
	if out, _ := exec.Command("iptables", "-t", "nat", "-S").CombinedOutput(); !strings.Contains(string(out), "18080") {
		t.Fatalf("no DNAT rule for the host port:\n%s", out)
	}
	serveInNetNS(t, at.NetNS, ":8080", "hello from c1")
	if got := dialRead(t, "10.77.0.1:18080"); got != "hello from c1" {
		t.Fatalf("through the mapped port: %q", got)
	}
	if got := dialRead(t, ip.GetIPAddress()+":8080"); got != "hello from c1" {
		t.Fatalf("at the container's address: %q", got)
	}

	// A restarted agent: the running container keeps its network.
	m2 := newManager()
	if err := m2.Recover(ctx, func(cid string) bool { return cid == "c1" }); err != nil {
		t.Fatal(err)
	}
	if st := m2.Status("c1"); len(st) != 1 || st[0].IPAddresses[0].GetIPAddress() != ip.GetIPAddress() || m2.NetNS("c1") != at.NetNS {
		t.Fatalf("recovered status %+v", st)
	}
	// Another restart after the container ended: it is detached.
	m3 := newManager()
	if err := m3.Recover(ctx, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	checkDetached(t, at.NetNS, ipam)
	if m3.Status("c1") != nil {
		t.Errorf("status after detach: %+v", m3.Status("c1"))
	}
}

// checkDetached checks that a container's namespace handle, port rules
// (host port 18080) and address leases in ipam are gone.
func checkDetached(t *testing.T, netns, ipam string) {
	t.Helper()
	if _, err := os.Stat(netns); !os.IsNotExist(err) {
		t.Errorf("namespace handle still there: %v", err)
	}
	if out, _ := exec.Command("iptables", "-t", "nat", "-S").CombinedOutput(); strings.Contains(string(out), "18080") {
		t.Errorf("port mapping rules left:\n%s", out)
	}
	if c, err := net.DialTimeout("tcp", "10.77.0.1:18080", time.Second); err == nil {
		c.Close()
		t.Errorf("the mapped port still answers")
	}
	if l := leases(ipam); len(l) != 0 {
		t.Errorf("address leases left: %v", l)
	}
}

// serveInNetNS answers every connection to addr inside the namespace with
// msg until the test ends.
func serveInNetNS(t *testing.T, netns, addr, msg string) {
	t.Helper()
	var ln net.Listener
	if err := InNetNS(netns, func() (err error) {
		ln, err = net.Listen("tcp4", addr)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, msg+"\n")
			c.Close()
		}
	}()
}

func dialRead(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("read from %s: %v", addr, err)
	}
	return strings.TrimSpace(line)
}

// An ADD that fails leaves nothing behind: no namespace, no checkpoint,
// and the error names the network.
func TestAttachFailureLeavesNothing(t *testing.T) {
	if !inOwnNetNS(t) {
		return
	}
	plugins := t.TempDir()
	script := "#!/bin/sh\ncase \"$CNI_COMMAND\" in ADD) echo '{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"no addresses left\"}'; exit 1;; esac\nexit 0\n"
	if err := os.WriteFile(filepath.Join(plugins, "failing"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	confs, state := t.TempDir(), t.TempDir()
	writeConf(t, confs, "f.conf", `{"cniVersion":"1.0.0","name":"flaky","type":"failing"}`)
	m, err := New(Config{ConfigDir: confs, PluginsDir: plugins, StateDir: state, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	name := "flaky"
	_, err = m.Attach(context.Background(), "c9", []mesos.NetworkInfo{{Name: &name}})
	if err == nil || !strings.Contains(err.Error(), `"flaky"`) || !strings.Contains(err.Error(), "no addresses left") {
		t.Fatalf("err = %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(state, "containers")); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

// threadNetNS is the inode of the calling thread's network namespace.
func threadNetNS(t *testing.T) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/self/task/%d/ns/net", syscall.Gettid()), &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// A thread lent to a namespace comes back to its own: it must not be
// thrown away, as a thread that ends kills (Pdeathsig) the children it
// forked, such as a command executor's task.
func TestThreadComesBackFromNetNS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a network namespace; running as uid", os.Geteuid())
	}
	ns := filepath.Join(t.TempDir(), "ns")
	if err := NewNetNS(ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { RemoveNetNS(ns) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		before := threadNetNS(t)
		var inside uint64
		f, err := os.Open(ns)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		back, err := onThisThread(func() error { return unix.Setns(int(f.Fd()), unix.CLONE_NEWNET) },
			func() error { inside = threadNetNS(t); return nil })
		if err != nil || !back {
			t.Errorf("onThisThread: %v, back %v", err, back)
		}
		if after := threadNetNS(t); inside == before || after != before {
			t.Errorf("thread's namespace before %d, inside %d, after %d: want it inside, then back", before, inside, after)
		}
	}()
	<-done
}

// What a plugin answers becomes the container's status (addresses as
// Mesos reports them) and its /etc files: the host name at its IPv4
// address, the name servers IPAM gave. The plugin saw the container id
// and eth0 for the first named network.
func TestResultToStatusAndEtcFiles(t *testing.T) {
	if !inOwnNetNS(t) {
		return
	}
	plugins, seen := t.TempDir(), filepath.Join(t.TempDir(), "env")
	script := "#!/bin/sh\ncat >/dev/null\nif [ \"$CNI_COMMAND\" = ADD ]; then echo \"$CNI_CONTAINERID $CNI_IFNAME\" >>" + seen + "; " +
		"echo '{\"cniVersion\":\"1.0.0\",\"ips\":[{\"address\":\"10.9.0.5/24\"},{\"address\":\"fd00::5/64\"}],\"dns\":{\"nameservers\":[\"10.9.0.1\"],\"search\":[\"svc.local\"]}}'; fi\nexit 0\n"
	if err := os.WriteFile(filepath.Join(plugins, "fake"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	confs := t.TempDir()
	writeConf(t, confs, "a.conf", `{"cniVersion":"1.0.0","name":"a","type":"fake"}`)
	m, err := New(Config{ConfigDir: confs, PluginsDir: plugins, StateDir: t.TempDir(), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	name := "a"
	at, err := m.Attach(context.Background(), "c7", []mesos.NetworkInfo{{}, {Name: &name}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Detach(context.Background(), "c7")
	if b, _ := os.ReadFile(seen); string(b) != "c7 eth0\n" {
		t.Errorf("plugin saw %q, want the container id and eth0", b)
	}
	ips := at.NetworkInfos[0].IPAddresses
	if len(ips) != 2 || ips[0].GetIPAddress() != "10.9.0.5" || ips[0].GetProtocol() != mesos.IPv4 ||
		ips[1].GetIPAddress() != "fd00::5" || ips[1].GetProtocol() != mesos.IPv6 {
		t.Fatalf("addresses %+v", ips)
	}
	files, err := m.EtcFiles("c7", "box")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range files {
		b, _ := os.ReadFile(f.Source)
		got[f.Target] = string(b)
	}
	if got["/etc/hostname"] != "box\n" || !strings.Contains(got["/etc/hosts"], "10.9.0.5 box\n") ||
		got["/etc/resolv.conf"] != "nameserver 10.9.0.1\nsearch svc.local\n" {
		t.Errorf("etc files %q", got)
	}
}
