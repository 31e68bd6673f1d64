package trace

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/allot-sched/allot/resources"
	"github.com/allot-sched/allot/sim"
)

// Cluster presets for --cluster, by name.
var clusterPresets = map[string]string{
	// The psdsf-online paper's heterogeneous cluster: two each of three
	// AWS c3.2xlarge-backed agent types.
	"psdsf-hetero": "2xcpus=4,mem=14G+2xcpus=8,mem=8G+2xcpus=6,mem=11G",
	// Its homogeneous variant: six type-3 agents (same totals).
	"psdsf-homo": "6xcpus=6,mem=11G",
	// The Alibaba replay cluster.
	"alibaba": "1000xcpus=96,mem=512G",
	// A Facebook-2009-sized Hadoop cluster for SWIM: 600 nodes of 8 cores,
	// 16 GiB, a disk at 200 MB/s and 1 GbE (125 MB/s).
	"swim": "600xcpus=8,mem=16G,disk_bw=200,net_bw=125",
	// The FSPY paper's YARN cluster: 8 virtual servers of 8 GB and 8
	// vcores (no bandwidth given, none modelled).
	"fspy": "8xcpus=8,mem=8G",
}

// ClusterPresets lists the preset names.
func ClusterPresets() []string {
	out := make([]string, 0, len(clusterPresets))
	for n := range clusterPresets {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// DefaultCluster is the cluster a trace format runs on when neither
// --nodes nor --cluster is given.
func DefaultCluster(f Format) string {
	switch f {
	case FormatAlibaba2017:
		return "alibaba"
	case FormatSWIM:
		return "swim"
	}
	return ""
}

// ParseCluster builds nodes from a spec: a preset name, or node types
// joined by '+', each "[COUNTx]name=value,..." with names cpus, mem, gpus,
// disk_bw, net_bw. mem is in MB unless suffixed G (GiB) or M; bandwidths
// are MB/s. Example: "2xcpus=4,mem=14G+2xcpus=8,mem=8G". Nodes are named
// t<type>-<n>.
func ParseCluster(spec string) ([]sim.Node, error) {
	spec = strings.TrimSpace(spec)
	if p, ok := clusterPresets[strings.ToLower(spec)]; ok {
		spec = p
	}
	if spec == "" {
		return nil, fmt.Errorf("empty cluster spec")
	}
	var nodes []sim.Node
	for ti, typ := range strings.Split(spec, "+") {
		typ = strings.TrimSpace(typ)
		count := 1
		if i := strings.IndexByte(typ, 'x'); i > 0 && !strings.Contains(typ[:i], "=") {
			n, err := strconv.Atoi(strings.TrimSpace(typ[:i]))
			if err != nil || n < 1 {
				return nil, fmt.Errorf("cluster type %d %q: count %q is not a whole number >= 1", ti+1, typ, typ[:i])
			}
			if n > maxNodesPerLine {
				return nil, fmt.Errorf("cluster type %d %q: at most %d nodes per type", ti+1, typ, maxNodesPerLine)
			}
			count, typ = n, typ[i+1:]
		}
		var v resources.Vector
		for _, kv := range strings.Split(typ, ",") {
			name, val, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok {
				return nil, fmt.Errorf("cluster type %d: %q: want name=value (names cpus, mem, gpus, disk_bw, net_bw)", ti+1, kv)
			}
			name = strings.ToLower(strings.TrimSpace(name))
			val = strings.TrimSpace(val)
			mult := 1.0
			if name == "mem" || name == "mem_mb" {
				name = "mem"
				switch u := strings.ToUpper(val); {
				case strings.HasSuffix(u, "GIB"), strings.HasSuffix(u, "GB"), strings.HasSuffix(u, "G"):
					mult, val = 1024, strings.TrimRight(val, "GgIiBb")
				case strings.HasSuffix(u, "MB"), strings.HasSuffix(u, "M"):
					val = strings.TrimRight(val, "MmBb")
				}
			}
			k, ok := resources.KindOf(name)
			if !ok || k == resources.Disk {
				return nil, fmt.Errorf("cluster type %d: unknown resource %q (names cpus, mem, gpus, disk_bw, net_bw)", ti+1, name)
			}
			x, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return nil, fmt.Errorf("cluster type %d: %s=%q is not a number", ti+1, name, val)
			}
			q, err := resources.QuantityFromFloat(x * mult)
			if err != nil {
				return nil, fmt.Errorf("cluster type %d: %s: %v", ti+1, name, err)
			}
			v[k] = q
		}
		if v[resources.CPUs] == 0 && v[resources.Mem] == 0 {
			return nil, fmt.Errorf("cluster type %d %q: a node needs cpus or mem", ti+1, typ)
		}
		for n := 1; n <= count; n++ {
			nodes = append(nodes, sim.Node{ID: fmt.Sprintf("t%d-%d", ti+1, n), Total: v})
		}
	}
	return nodes, nil
}
