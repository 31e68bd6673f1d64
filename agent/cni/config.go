package cni

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rs/zerolog"
)

// mesosArgsKey is the key under a plugin's "args" where the container's
// NetworkInfo for that network is passed; Mesos reserves it, so a
// configuration that sets it itself is refused.
const mesosArgsKey = "org.apache.mesos"

// configExts are the configuration files read; others (a README, an
// editor's backup) are not networks.
var configExts = []string{".conf", ".conflist", ".json"}

// networks is what the configuration directory holds: each network's name
// and the file that defines it. Files are read again at each attach, so
// an edited network takes effect for the next container.
type networks struct {
	dir     string
	plugins []string // directories searched for plugins, in order
	log     zerolog.Logger

	mu     sync.Mutex
	byName map[string]string
}

// scan reads the configuration directory afresh.
func (n *networks) scan() error {
	ents, err := os.ReadDir(n.dir)
	if err != nil {
		return fmt.Errorf("listing the CNI configuration directory: %w", err)
	}
	found := map[string]string{}
	for _, e := range ents {
		if e.IsDir() || !slices.Contains(configExts, filepath.Ext(e.Name())) {
			continue
		}
		path := filepath.Join(n.dir, e.Name())
		name, err := n.check(path)
		if err != nil {
			n.log.Error().Err(err).Str("file", path).Msg("CNI network configuration skipped")
			continue
		}
		if prev, dup := found[name]; dup {
			n.log.Error().Str("file", path).Str("network", name).Str("defined_in", prev).
				Msg("CNI network configuration skipped: a network of that name is defined already")
			continue
		}
		found[name] = path
	}
	n.mu.Lock()
	n.byName = found
	n.mu.Unlock()
	return nil
}

// check parses the configuration in path and finds its plugins; it
// returns the network's name.
func (n *networks) check(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	c, err := parseConfig(b)
	if err != nil {
		return "", err
	}
	for _, typ := range c.pluginTypes() {
		if n.findPlugin(typ) == "" {
			return "", fmt.Errorf("network %q: plugin %q not found in %s", c.name, typ, strings.Join(n.plugins, ":"))
		}
	}
	return c.name, nil
}

func (n *networks) findPlugin(typ string) string {
	if typ == "" || strings.ContainsRune(typ, '/') {
		return ""
	}
	for _, d := range n.plugins {
		p := filepath.Join(d, typ)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// names lists the known networks, sorted.
func (n *networks) names() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.byName))
	for k := range n.byName {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// lookup reads network name's configuration from disk. A name not known,
// or whose file no longer defines it, makes the directory be read again
// first, so that networks added since are found.
func (n *networks) lookup(name string) (*config, error) {
	for pass := 0; pass < 2; pass++ {
		n.mu.Lock()
		path, ok := n.byName[name]
		n.mu.Unlock()
		if ok {
			if b, err := os.ReadFile(path); err == nil {
				if c, err := parseConfig(b); err == nil && c.name == name {
					return c, nil
				}
			}
		}
		if pass == 0 {
			if err := n.scan(); err != nil {
				return nil, err
			}
		}
	}
	known := n.names()
	list := "none"
	if len(known) > 0 {
		list = strings.Join(known, ", ")
	}
	return nil, &UnknownNetworkError{Name: name, Known: list}
}

// UnknownNetworkError is a container asking for a network the agent does
// not have.
type UnknownNetworkError struct{ Name, Known string }

func (e *UnknownNetworkError) Error() string {
	return fmt.Sprintf("unknown CNI network %q (this agent's networks: %s)", e.Name, e.Known)
}

// config is one network's configuration, always as a list of plugins
// (a single-plugin .conf is made a list of one, as libcni does).
type config struct {
	name string
	raw  map[string]any // the list: name, cniVersion, plugins, ...
}

func parseConfig(b []byte) (*config, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a CNI configuration: %w", err)
	}
	name, _ := m["name"].(string)
	if name == "" {
		return nil, errors.New("CNI configuration without a \"name\"")
	}
	if _, list := m["plugins"]; !list {
		single := m
		m = map[string]any{"name": name, "plugins": []any{single}}
		if v, ok := single["cniVersion"]; ok {
			m["cniVersion"] = v
		}
	}
	plugins, ok := m["plugins"].([]any)
	if !ok || len(plugins) == 0 {
		return nil, fmt.Errorf("network %q: \"plugins\" is not a list of plugins", name)
	}
	for i, p := range plugins {
		pm, ok := p.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("network %q: plugin %d is not an object", name, i)
		}
		if t, _ := pm["type"].(string); t == "" {
			return nil, fmt.Errorf("network %q: plugin %d has no \"type\"", name, i)
		}
		if args, ok := pm["args"].(map[string]any); ok && args[mesosArgsKey] != nil {
			return nil, fmt.Errorf("network %q: args[%q] is reserved for the agent", name, mesosArgsKey)
		}
	}
	return &config{name: name, raw: m}, nil
}

// pluginTypes are the plugins the network runs, IPAM plugins included.
func (c *config) pluginTypes() []string {
	var out []string
	for _, p := range c.raw["plugins"].([]any) {
		pm := p.(map[string]any)
		out = append(out, pm["type"].(string))
		if ipam, ok := pm["ipam"].(map[string]any); ok {
			if t, _ := ipam["type"].(string); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// withArgs is the list's JSON with networkInfo (the container's
// NetworkInfo for it, as JSON) under args["org.apache.mesos"] of every
// plugin, as Mesos passes it.
func (c *config) withArgs(networkInfo json.RawMessage) ([]byte, error) {
	plugins := c.raw["plugins"].([]any)
	out := make(map[string]any, len(c.raw))
	for k, v := range c.raw {
		out[k] = v
	}
	list := make([]any, len(plugins))
	for i, p := range plugins {
		pm := make(map[string]any)
		for k, v := range p.(map[string]any) {
			pm[k] = v
		}
		args := map[string]any{}
		if a, ok := pm["args"].(map[string]any); ok {
			for k, v := range a {
				args[k] = v
			}
		}
		args[mesosArgsKey] = map[string]any{"network_info": networkInfo}
		pm["args"] = args
		list[i] = pm
	}
	out["plugins"] = list
	return json.Marshal(out)
}
