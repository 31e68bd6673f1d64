// Package cni attaches containers to CNI networks, as Mesos's network/cni
// isolator does: the agent names the networks a container asks for
// (NetworkInfo.name), and this package gives the container a network
// namespace of its own and has the networks' CNI plugins put it on them.
//
//   - config.go: the networks, learned from the configuration directory
//     (--network-cni-config-dir, .conf/.conflist/.json files, one network
//     each, by its "name"); a network whose plugins are not in the plugin
//     directory is skipped and logged; an unknown name is looked for again
//     on disk before it is refused, so that a network added while the
//     agent runs is found without a restart (as Mesos).
//   - netns.go: a network namespace per container, held by a bind mount
//     of its nsfs file under the state directory, so that it outlives the
//     process that made it and can be handed to plugins and launchers by
//     path; its loopback is brought up.
//   - manager.go: Attach (namespace, then CNI ADD per network with the
//     container id, interface ethN, the network's NetworkInfo in
//     args["org.apache.mesos"] and its port_mappings as the portMappings
//     capability), Detach (CNI DEL with the configuration used at ADD,
//     then the namespace is removed), Recover after an agent restart, and
//     the addresses as Mesos reports them in ContainerStatus.network_infos.
//
// Every attachment is checkpointed before its plugin runs (the
// configuration passed, the result once it is known), so that DEL can be
// done with the same configuration even if the file in the configuration
// directory changed or went away, and so that an agent that died half way
// through an ADD still removes what was made.
package cni
