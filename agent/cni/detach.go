package cni

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/libcni"
)

// Detach takes container cid off its networks (DEL, last network first,
// with the configuration ADD was given) and removes its namespace. A
// container with nothing attached is no error. When a DEL fails the
// checkpoint is kept, so that Recover tries again after a restart.
func (m *Manager) Detach(ctx context.Context, cid string) error {
	dir, err := m.containerDir(cid)
	if err != nil {
		return err
	}
	m.mu.Lock()
	at := m.attached[cid]
	m.mu.Unlock()
	if at == nil {
		if at, err = m.load(dir); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return m.removeDir(dir)
			}
			return err
		}
	}
	netns := at.NetNS
	if !isNetNS(netns) {
		netns = "" // gone (a reboot): DEL still releases addresses and rules
	}
	var errs []error
	for i := len(at.Networks) - 1; i >= 0; i-- {
		n := &at.Networks[i]
		if m.cni == nil {
			errs = append(errs, fmt.Errorf("CNI network %q: CNI is not configured on this agent", n.Name))
			continue
		}
		list, err := libcni.ConfListFromBytes(n.Conf)
		if err == nil {
			err = m.cni.DelNetworkList(ctx, list, runtimeConf(at, n, netns))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("CNI network %q: detaching container %s: %w", n.Name, cid, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		m.mu.Lock()
		m.detachErrors++
		m.mu.Unlock()
		return err
	}
	m.mu.Lock()
	delete(m.attached, cid)
	m.mu.Unlock()
	if err := m.removeDir(dir); err != nil {
		return err
	}
	m.cfg.Log.Info().Str("container_id", cid).Msg("cni: detached")
	return nil
}

// removeDir removes a container's directory, its namespace first.
func (m *Manager) removeDir(dir string) error {
	if err := RemoveNetNS(filepath.Join(dir, "ns")); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// Recover reloads the checkpoints of the containers live says are still
// running, and detaches every other container found (one that ended while
// the agent was down, or whose attach the agent died in).
func (m *Manager) Recover(ctx context.Context, live func(cid string) bool) error {
	if m.nets == nil {
		return nil
	}
	root := filepath.Join(m.cfg.StateDir, "containers")
	ents, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		cid := e.Name()
		if !e.IsDir() {
			continue
		}
		if live(cid) {
			at, err := m.load(filepath.Join(root, cid))
			if err != nil {
				errs = append(errs, fmt.Errorf("container %s: %w", cid, err))
				continue
			}
			m.mu.Lock()
			m.attached[cid] = at
			m.mu.Unlock()
			continue
		}
		m.cfg.Log.Info().Str("container_id", cid).Msg("cni: detaching a container of an earlier run")
		if err := m.Detach(ctx, cid); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) containerDir(cid string) (string, error) {
	if cid == "" || cid == "." || cid == ".." || strings.ContainsAny(cid, "/\x00") {
		return "", fmt.Errorf("cni: bad container id %q", cid)
	}
	return filepath.Join(m.cfg.StateDir, "containers", cid), nil
}

// save checkpoints at (write and rename, so a crash leaves the old or the
// new one).
func (m *Manager) save(at *attachment) error {
	m.mu.Lock()
	b, err := json.Marshal(at)
	m.mu.Unlock()
	if err != nil {
		return err
	}
	dir, err := m.containerDir(at.ContainerID)
	if err != nil {
		return err
	}
	p := filepath.Join(dir, "state.json")
	if err := os.WriteFile(p+".tmp", b, 0o600); err != nil {
		return fmt.Errorf("cni: checkpointing container %s: %w", at.ContainerID, err)
	}
	return os.Rename(p+".tmp", p)
}

func (m *Manager) load(dir string) (*attachment, error) {
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return nil, err
	}
	var at attachment
	if err := json.Unmarshal(b, &at); err != nil {
		return nil, fmt.Errorf("cni: checkpoint %s: %w", dir, err)
	}
	return &at, nil
}
