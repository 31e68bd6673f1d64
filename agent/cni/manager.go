package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/containernetworking/cni/libcni"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/rs/zerolog"
)

// Config is where networks and plugins are found and where attachments
// are kept.
type Config struct {
	// ConfigDir and PluginsDir are --network-cni-config-dir and
	// --network-cni-plugins-dir (a colon-separated search path); both
	// empty turns CNI off: every container keeps the host's network, and
	// one that names a network is refused.
	ConfigDir, PluginsDir string
	// StateDir holds each container's namespace and checkpoint, and
	// libcni's cache; under the agent's work dir.
	StateDir string
	Log      zerolog.Logger
}

// Manager attaches containers to CNI networks. Safe for concurrent use;
// each container is attached and detached by one caller at a time.
type Manager struct {
	cfg  Config
	nets *networks // nil: CNI is off
	cni  *libcni.CNIConfig

	mu       sync.Mutex
	attached map[string]*attachment // by container id
	// attachErrors and detachErrors count the attaches and detaches that
	// failed (Stats).
	attachErrors, detachErrors int
}

// Stats is what the agent's metrics show of CNI.
type Stats struct {
	Networks, Attached, AttachErrors, DetachErrors int
}

// Stats counts the networks known, the containers attached now and the
// attaches and detaches that failed since the start.
func (m *Manager) Stats() Stats {
	n := len(m.Networks())
	m.mu.Lock()
	defer m.mu.Unlock()
	return Stats{Networks: n, Attached: len(m.attached), AttachErrors: m.attachErrors, DetachErrors: m.detachErrors}
}

// New reads the networks of cfg.ConfigDir. Both directories empty gives a
// Manager with no networks; one without the other, or a configuration
// directory that is not there, is an error (the agent does not start), as
// in Mesos.
func New(cfg Config) (*Manager, error) {
	m := &Manager{cfg: cfg, attached: map[string]*attachment{}}
	if cfg.ConfigDir == "" && cfg.PluginsDir == "" {
		return m, nil
	}
	if cfg.ConfigDir == "" || cfg.PluginsDir == "" {
		return nil, errors.New("cni: --network-cni-config-dir and --network-cni-plugins-dir go together: give both or neither")
	}
	if st, err := os.Stat(cfg.ConfigDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("cni: the CNI network configuration directory %q does not exist", cfg.ConfigDir)
	}
	if cfg.StateDir == "" {
		return nil, errors.New("cni: no state directory")
	}
	if err := os.MkdirAll(filepath.Join(cfg.StateDir, "containers"), 0o755); err != nil {
		return nil, fmt.Errorf("cni: %w", err)
	}
	path := filepath.SplitList(cfg.PluginsDir)
	m.nets = &networks{dir: cfg.ConfigDir, plugins: path, log: cfg.Log}
	if err := m.nets.scan(); err != nil {
		return nil, fmt.Errorf("cni: %w", err)
	}
	m.cni = libcni.NewCNIConfigWithCacheDir(path, filepath.Join(cfg.StateDir, "cache"), nil)
	return m, nil
}

// Enabled reports whether CNI networks are configured at all.
func (m *Manager) Enabled() bool { return m.nets != nil }

// Networks lists the networks known now, sorted.
func (m *Manager) Networks() []string {
	if m.nets == nil {
		return nil
	}
	return m.nets.names()
}

// attachment is one container's checkpoint: its namespace and, per
// network, what ADD was given and what it answered.
type attachment struct {
	ContainerID string            `json:"container_id"`
	NetNS       string            `json:"netns"`
	Networks    []attachedNetwork `json:"networks"`
}

type attachedNetwork struct {
	Name   string          `json:"name"`
	IfName string          `json:"ifname"`
	Conf   json.RawMessage `json:"conf"`   // the list as passed to ADD, args included
	Info   []byte          `json:"info"`   // the container's NetworkInfo, protobuf
	Ports  []portMapping   `json:"ports"`  // the portMappings capability
	Result json.RawMessage `json:"result"` // ADD's answer; empty until it came
}

// portMapping is the portMappings capability's entry, which the standard
// portmap plugin reads from runtimeConfig.
type portMapping struct {
	HostPort      int    `json:"hostPort"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
}

// NamedNetworks are the NetworkInfos that ask for a CNI network: those
// with a name (Mesos skips the others, which mean the host network).
func NamedNetworks(infos []mesos.NetworkInfo) []mesos.NetworkInfo {
	var out []mesos.NetworkInfo
	for _, ni := range infos {
		if ni.GetName() != "" {
			out = append(out, ni)
		}
	}
	return out
}

// Check says why infos cannot be attached here (an unknown network, one
// asked for twice), or nil; it makes nothing.
func (m *Manager) Check(infos []mesos.NetworkInfo) error {
	_, err := m.resolve(NamedNetworks(infos))
	return err
}

func (m *Manager) resolve(named []mesos.NetworkInfo) ([]attachedNetwork, error) {
	var out []attachedNetwork
	seen := map[string]bool{}
	for i, ni := range named {
		name := ni.GetName()
		if m.nets == nil {
			return nil, &UnknownNetworkError{Name: name, Known: "none: --network-cni-config-dir is not set"}
		}
		if seen[name] {
			return nil, fmt.Errorf("CNI network %q is asked for more than once", name)
		}
		seen[name] = true
		c, err := m.nets.lookup(name)
		if err != nil {
			return nil, err
		}
		js, err := networkInfoJSON(ni)
		if err != nil {
			return nil, err
		}
		conf, err := c.withArgs(js)
		if err != nil {
			return nil, err
		}
		pb, err := ni.Marshal()
		if err != nil {
			return nil, err
		}
		out = append(out, attachedNetwork{Name: name, IfName: fmt.Sprintf("eth%d", i), Conf: conf, Info: pb, Ports: portMappings(ni)})
	}
	return out, nil
}

// networkInfoJSON is ni as Mesos writes a protobuf in JSON (field names
// as in the .proto, no empty lists).
func networkInfoJSON(ni mesos.NetworkInfo) (json.RawMessage, error) {
	b, err := json.Marshal(ni)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
	return json.Marshal(m)
}

func portMappings(ni mesos.NetworkInfo) []portMapping {
	var out []portMapping
	for _, pm := range ni.PortMappings {
		proto := strings.ToLower(pm.GetProtocol())
		if proto == "" {
			proto = "tcp"
		}
		out = append(out, portMapping{HostPort: int(pm.HostPort), ContainerPort: int(pm.ContainerPort), Protocol: proto})
	}
	return out
}

// Attached is a container on its networks: the namespace to run it in
// and its NetworkInfos with their addresses, as TaskStatus reports them.
type Attached struct {
	NetNS        string
	NetworkInfos []mesos.NetworkInfo
}

// Attach gives container cid its own network namespace on the named
// networks of infos. Nil and no error when infos name none: the
// container stays on the host's network. On an error nothing is left
// behind.
func (m *Manager) Attach(ctx context.Context, cid string, infos []mesos.NetworkInfo) (*Attached, error) {
	named := NamedNetworks(infos)
	if len(named) == 0 {
		return nil, nil
	}
	nets, err := m.resolve(named)
	if err != nil {
		m.mu.Lock()
		m.attachErrors++
		m.mu.Unlock()
		return nil, err
	}
	dir, err := m.containerDir(cid)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	at := &attachment{ContainerID: cid, NetNS: filepath.Join(dir, "ns"), Networks: nets}
	m.mu.Lock()
	m.attached[cid] = at
	m.mu.Unlock()
	if err := m.save(at); err == nil {
		err = NewNetNS(at.NetNS)
	}
	for i := 0; err == nil && i < len(at.Networks); i++ {
		err = m.add(ctx, at, i)
	}
	if err != nil {
		m.mu.Lock()
		m.attachErrors++
		m.mu.Unlock()
		// Undone even when ctx ran out (a hanging ADD), within a bound
		// of its own.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		derr := m.Detach(dctx, cid)
		cancel()
		if derr != nil {
			m.cfg.Log.Warn().Err(derr).Str("container_id", cid).Msg("cni: undoing a failed attach")
		}
		return nil, err
	}
	return &Attached{NetNS: at.NetNS, NetworkInfos: at.networkInfos()}, nil
}

// add runs ADD for the i-th network of at and checkpoints its answer.
func (m *Manager) add(ctx context.Context, at *attachment, i int) error {
	n := &at.Networks[i]
	list, err := libcni.ConfListFromBytes(n.Conf)
	if err != nil {
		return fmt.Errorf("CNI network %q: %w", n.Name, err)
	}
	res, err := m.cni.AddNetworkList(ctx, list, runtimeConf(at, n, at.NetNS))
	if err != nil {
		return fmt.Errorf("CNI network %q: attaching container %s: %w", n.Name, at.ContainerID, err)
	}
	r, err := types100.NewResultFromResult(res)
	if err != nil {
		return fmt.Errorf("CNI network %q: the plugin's result: %w", n.Name, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	m.mu.Lock()
	n.Result = b
	m.mu.Unlock()
	m.cfg.Log.Info().Str("container_id", at.ContainerID).Str("network", n.Name).Strs("ips", resultIPs(b)).Msg("cni: attached")
	return m.save(at)
}

func runtimeConf(at *attachment, n *attachedNetwork, netns string) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{ContainerID: at.ContainerID, NetNS: netns, IfName: n.IfName}
	if len(n.Ports) > 0 {
		rt.CapabilityArgs = map[string]any{"portMappings": n.Ports}
	}
	return rt
}

// resultIPs are the addresses (without prefix length) of a result.
func resultIPs(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	var r types100.Result
	if json.Unmarshal(b, &r) != nil {
		return nil
	}
	var out []string
	for _, ip := range r.IPs {
		out = append(out, ip.Address.IP.String())
	}
	return out
}

// networkInfos are the container's NetworkInfos as asked for, with the
// addresses its plugins gave (Mesos's ContainerStatus.network_infos); a
// network whose ADD has not answered is left out.
func (at *attachment) networkInfos() []mesos.NetworkInfo {
	var out []mesos.NetworkInfo
	for _, n := range at.Networks {
		if len(n.Result) == 0 {
			continue
		}
		var ni mesos.NetworkInfo
		if ni.Unmarshal(n.Info) != nil {
			ni = mesos.NetworkInfo{Name: &n.Name}
		}
		ni.IPAddresses = nil
		for _, ip := range resultIPs(n.Result) {
			proto := mesos.IPv4
			if p := net.ParseIP(ip); p != nil && p.To4() == nil {
				proto = mesos.IPv6
			}
			ni.IPAddresses = append(ni.IPAddresses, mesos.NetworkInfo_IPAddress{Protocol: proto.Enum(), IPAddress: &ip})
		}
		out = append(out, ni)
	}
	return out
}

// Status is container cid's NetworkInfos with their addresses, nil for a
// container on the host's network.
func (m *Manager) Status(cid string) []mesos.NetworkInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	if at := m.attached[cid]; at != nil {
		return at.networkInfos()
	}
	return nil
}

// NetNS is the namespace path of container cid, "" when it has none.
func (m *Manager) NetNS(cid string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if at := m.attached[cid]; at != nil {
		return at.NetNS
	}
	return ""
}
