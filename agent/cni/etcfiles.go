package cni

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	types100 "github.com/containernetworking/cni/pkg/types/100"
)

// EtcFile is a file a container on CNI networks sees at Target in place
// of the host's: Source is the agent's copy.
type EtcFile struct{ Source, Target string }

// EtcFiles writes container cid's /etc/hostname (hostname), /etc/hosts
// (localhost, and hostname at the container's first IPv4 address) and,
// /etc/resolv.conf with the name servers its networks' IPAM gave, as
// Mesos does for a container in a network namespace of its own; without
// name servers it is the host's /etc/resolv.conf (Source = Target). The
// files live in the container's directory and go with it.
func (m *Manager) EtcFiles(cid, hostname string) ([]EtcFile, error) {
	dir, err := m.containerDir(cid)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	at := m.attached[cid]
	var results [][]byte
	if at != nil {
		for _, n := range at.Networks {
			results = append(results, n.Result)
		}
	}
	m.mu.Unlock()
	if at == nil {
		return nil, fmt.Errorf("cni: container %s is on no network", cid)
	}
	hosts := "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n"
	var dns types100.Result
	for _, b := range results {
		var r types100.Result
		if json.Unmarshal(b, &r) != nil {
			continue
		}
		for _, ip := range r.IPs {
			if ip4 := ip.Address.IP.To4(); ip4 != nil && !strings.Contains(hosts, " "+hostname+"\n") {
				hosts += ip4.String() + " " + hostname + "\n"
			}
		}
		// Name servers in order, single values from the last network
		// that sets them (as Mesos merges them).
		dns.DNS.Nameservers = append(dns.DNS.Nameservers, r.DNS.Nameservers...)
		dns.DNS.Search = append(dns.DNS.Search, r.DNS.Search...)
		dns.DNS.Options = append(dns.DNS.Options, r.DNS.Options...)
		if r.DNS.Domain != "" {
			dns.DNS.Domain = r.DNS.Domain
		}
	}
	files := []struct{ name, target, body string }{
		{"hostname", "/etc/hostname", hostname + "\n"},
		{"hosts", "/etc/hosts", hosts},
	}
	if len(dns.DNS.Nameservers) > 0 {
		files = append(files, struct{ name, target, body string }{"resolv.conf", "/etc/resolv.conf", resolvConf(dns)})
	}
	var out []EtcFile
	if len(dns.DNS.Nameservers) == 0 {
		if st, err := os.Stat("/etc/resolv.conf"); err == nil && st.Mode().IsRegular() {
			out = append(out, EtcFile{Source: "/etc/resolv.conf", Target: "/etc/resolv.conf"})
		}
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.body), 0o644); err != nil {
			return nil, fmt.Errorf("cni: container %s: %w", cid, err)
		}
		out = append(out, EtcFile{Source: p, Target: f.target})
	}
	return out, nil
}

func resolvConf(r types100.Result) string {
	var b strings.Builder
	if r.DNS.Domain != "" {
		fmt.Fprintf(&b, "domain %s\n", r.DNS.Domain)
	}
	for _, ns := range r.DNS.Nameservers {
		fmt.Fprintf(&b, "nameserver %s\n", ns)
	}
	if len(r.DNS.Search) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(r.DNS.Search, " "))
	}
	if len(r.DNS.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(r.DNS.Options, " "))
	}
	return b.String()
}
