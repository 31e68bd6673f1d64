package cni

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"
)

// fakePlugins makes a plugin directory holding executables of the given
// names (they are only looked for, not run).
func fakePlugins(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeConf(t *testing.T, dir, file, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, file), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestParseConfig(t *testing.T) {
	cases := []struct {
		name, body string
		wantName   string
		wantTypes  string
		wantErr    string
	}{
		{"single conf becomes a list", `{"cniVersion":"1.0.0","name":"a","type":"bridge","ipam":{"type":"host-local"}}`, "a", "bridge,host-local", ""},
		{"conflist", `{"cniVersion":"1.0.0","name":"b","plugins":[{"type":"bridge"},{"type":"portmap"}]}`, "b", "bridge,portmap", ""},
		{"no name", `{"type":"bridge"}`, "", "", "without a \"name\""},
		{"not json", `{`, "", "", "not a CNI configuration"},
		{"empty plugins", `{"name":"c","plugins":[]}`, "", "", "not a list of plugins"},
		{"plugin without type", `{"name":"c","plugins":[{"bridge":"x"}]}`, "", "", "has no \"type\""},
		{"reserved args", `{"name":"c","type":"bridge","args":{"org.apache.mesos":{}}}`, "", "", "reserved for the agent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseConfig([]byte(c.body))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.name != c.wantName || strings.Join(cfg.pluginTypes(), ",") != c.wantTypes {
				t.Fatalf("name %q types %v, want %q %q", cfg.name, cfg.pluginTypes(), c.wantName, c.wantTypes)
			}
		})
	}
}

// The network's NetworkInfo reaches every plugin under
// args["org.apache.mesos"].network_info, as Mesos passes it, beside the
// configuration's own args.
func TestWithArgsPassesNetworkInfo(t *testing.T) {
	cfg, err := parseConfig([]byte(`{"cniVersion":"1.0.0","name":"n","plugins":[{"type":"bridge","args":{"mine":1}},{"type":"portmap"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	name, proto := "n", "udp"
	ni := mesos.NetworkInfo{Name: &name, PortMappings: []mesos.NetworkInfo_PortMapping{{HostPort: 8080, ContainerPort: 80, Protocol: &proto}}}
	js, err := networkInfoJSON(ni)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cfg.withArgs(js)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{`"mine":1`, `"org.apache.mesos":{"network_info":{"name":"n","port_mappings":[{"container_port":80,"host_port":8080,"protocol":"udp"}]}}`} {
		if !strings.Contains(got, want) {
			t.Errorf("config %s lacks %s", got, want)
		}
	}
	if strings.Count(got, `"org.apache.mesos"`) != 2 {
		t.Errorf("config %s: want the NetworkInfo in both plugins' args", got)
	}
	if strings.Contains(got, "null") {
		t.Errorf("config %s has a null (Mesos leaves empty fields out)", got)
	}
	if pm := portMappings(ni); len(pm) != 1 || pm[0] != (portMapping{HostPort: 8080, ContainerPort: 80, Protocol: "udp"}) {
		t.Errorf("portMappings = %+v", pm)
	}
}

func TestNewFlags(t *testing.T) {
	plugins := fakePlugins(t, "bridge")
	confs := t.TempDir()
	cases := []struct {
		name             string
		confDir, plugDir string
		wantErr          string
		wantEnabled      bool
	}{
		{"neither: off", "", "", "", false},
		{"config dir alone", confs, "", "go together", false},
		{"plugins dir alone", "", plugins, "go together", false},
		{"missing config dir", filepath.Join(confs, "nope"), plugins, "does not exist", false},
		{"both", confs, plugins, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := New(Config{ConfigDir: c.confDir, PluginsDir: c.plugDir, StateDir: t.TempDir(), Log: zerolog.Nop()})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Enabled() != c.wantEnabled {
				t.Fatalf("Enabled() = %v", m.Enabled())
			}
		})
	}
}

// Networks are learned from the directory: one whose plugin is missing,
// a second definition of a name and other files are skipped; a network
// added later is found when a container asks for it; an unknown one is
// refused naming the ones there are.
func TestNetworksFromConfigDir(t *testing.T) {
	plugins := fakePlugins(t, "bridge", "host-local", "portmap")
	confs := t.TempDir()
	writeConf(t, confs, "10-a.conf", `{"cniVersion":"1.0.0","name":"a","type":"bridge","ipam":{"type":"host-local"}}`)
	writeConf(t, confs, "20-a.conflist", `{"cniVersion":"1.0.0","name":"a","plugins":[{"type":"bridge"}]}`)
	writeConf(t, confs, "30-b.conflist", `{"cniVersion":"1.0.0","name":"b","plugins":[{"type":"bridge"},{"type":"portmap"}]}`)
	writeConf(t, confs, "40-c.conf", `{"cniVersion":"1.0.0","name":"c","type":"macvlan"}`)
	writeConf(t, confs, "50-d.conf", `{"cniVersion":"1.0.0","name":"d","type":"bridge","ipam":{"type":"dhcp"}}`)
	writeConf(t, confs, "README", `not a network`)
	m, err := New(Config{ConfigDir: confs, PluginsDir: "/nonexistent:" + plugins, StateDir: t.TempDir(), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Networks(), ","); got != "a,b" {
		t.Fatalf("networks %q, want a,b", got)
	}
	name := func(s string) mesos.NetworkInfo { return mesos.NetworkInfo{Name: &s} }
	err = m.Check([]mesos.NetworkInfo{name("zz")})
	var unk *UnknownNetworkError
	if !errors.As(err, &unk) || !strings.Contains(err.Error(), `"zz"`) || !strings.Contains(err.Error(), "a, b") {
		t.Fatalf("unknown network: err = %v", err)
	}
	if err := m.Check([]mesos.NetworkInfo{name("a"), name("a")}); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Fatalf("a network twice: err = %v", err)
	}
	writeConf(t, confs, "60-e.conf", `{"cniVersion":"1.0.0","name":"e","type":"bridge"}`)
	if err := m.Check([]mesos.NetworkInfo{name("e"), {}}); err != nil {
		t.Fatalf("a network added while running: %v", err)
	}
	// Only unnamed NetworkInfos: the host network, nothing to do.
	if at, err := m.Attach(context.Background(), "c1", []mesos.NetworkInfo{{}}); at != nil || err != nil {
		t.Fatalf("Attach without names = %v, %v", at, err)
	}
}

func TestOffRefusesNamedNetworks(t *testing.T) {
	m, err := New(Config{Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	n := "net1"
	_, err = m.Attach(context.Background(), "c1", []mesos.NetworkInfo{{Name: &n}})
	if err == nil || !strings.Contains(err.Error(), `unknown CNI network "net1"`) || !strings.Contains(err.Error(), "--network-cni-config-dir") {
		t.Fatalf("err = %v", err)
	}
	if err := m.Recover(context.Background(), func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
}
