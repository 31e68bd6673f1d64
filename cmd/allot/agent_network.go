package main

import "flag"

// networkFlags are allot agent's flags for CNI networks, Mesos's
// --network_cni_config_dir and --network_cni_plugins_dir (docs/networks.md).
type networkFlags struct {
	configDir, pluginsDir string
}

func addNetworkFlags(fs *flag.FlagSet) *networkFlags {
	f := &networkFlags{}
	fs.StringVar(&f.configDir, "network-cni-config-dir", "", "`dir`ectory of CNI network configurations (.conf, .conflist, .json; one network each, by its \"name\"): a task whose ContainerInfo.network_infos names one gets its own network namespace on it, with its port_mappings on the host; empty (and no --network-cni-plugins-dir): no CNI networks, and a task that names one fails (docs/networks.md)")
	fs.StringVar(&f.pluginsDir, "network-cni-plugins-dir", "", "`dir`ectory (or colon-separated list) holding the CNI plugin binaries the networks name, e.g. /usr/lib/cni (Debian's containernetworking-plugins); required with --network-cni-config-dir")
	return f
}
