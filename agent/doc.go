// Package agent is allot's agent: it registers with the leading master and
// keeps a stream to it (commands down, status updates up), runs executors as
// real child processes in a sandbox per executor run with the MESOS_*
// environment mesos-go executors read, serves the executor API at
// /api/v1/executor, delivers status updates at least once (checkpointed and
// retried until the framework acknowledges), fetches CommandInfo URIs, and
// recovers checkpointing frameworks' executors after a restart. An agent
// the operator marked gone (REGISTER answered 410) kills its executors, forgets
// its tasks and id and registers afresh (removed.go).
//
// The agent's rooms, as Mesos splits its slave into slave, containerizer,
// status update manager and http, so that each job can grow on its own:
//
//   - agent.go: Config, New, Start and Stop, the agent's shape.
//   - masterlink.go: the link to the leading master: registration (and
//     following a redirect to the leader), the event stream and its
//     watchdog, and the senders that post calls to the master in batches.
//   - dispatch.go: the agent's record of executors and their tasks, and
//     the dispatch of each master event to them: RUN starts tasks on their
//     executor (a new run of it if none is live), KILL, SHUTDOWN and
//     framework messages reach it, ACKNOWLEDGE goes to the updates.
//   - launch.go: launch and containment of one executor run: sandbox,
//     fetched URIs, user, environment, the process in its container, the
//     registration timeout, shutdown with its grace, and the end of the
//     run, which fails or kills the tasks still open.
//   - updates.go: the status update manager: each task's updates queue
//     in order, only the head in flight, checkpointed, retried with
//     backoff until the framework acknowledges it (10 s doubling to
//     10 min, as Mesos; Config.StatusUpdateRetry*), the acknowledgement
//     passed on to the executor whose update it was.
//   - containers.go: a RUN asking for a container allot cannot provide
//     (a DOCKER containerizer, an image on the default executor,
//     networks on a task of a group) fails TASK_FAILED instead of running
//     on the host.
//   - volumes.go: checkpointed resources (dynamic reservations and
//     persistent volumes) from the master's CHECKPOINT_RESOURCES, kept
//     across restarts and sent back in REGISTER; each volume a directory
//     under volumes/roles/, linked into the sandboxes that use it.
//   - container_spec.go: a container that needs more than a process (an
//     image's rootfs, a network namespace, device files) is described in
//     an nslaunch.Spec, one part per feature (container_image.go,
//     container_network.go, gpu_devices.go), and started through
//     `allot container-launch`; the command executor runs its task's
//     command that way (cmdexec_container.go). Images are pulled, stored
//     and assembled by agent/imagestore (container_image.go). CNI
//     networks (container_network.go, package cni): a container that
//     names networks in network_infos is attached to them in a network
//     namespace of its own, its addresses go in its tasks' updates
//     (container_status.network_infos), and it is detached when destroyed
//     or, after a restart, when found ended. Task groups
//     (container_group.go): each task naming an image gets a rootfs and a
//     Spec of its own, prepared before the group reaches the executor, and
//     all share the executor's network namespace (cmdexec_group.go joins
//     them); disk/du counts containers' writable layers (container_disk.go).
//   - executorapi.go: the executor HTTP API, /api/v1/executor: SUBSCRIBE
//     (the executor's event stream, and what a re-subscribing executor
//     hands back), UPDATE and MESSAGE.
//
// A status update thus goes executorapi.go (UPDATE, stamped as the
// executor's) to updates.go (enqueued, checkpointed by checkpoint.go, sent
// by masterlink.go's senders, retried by retryLoop) and back through
// masterlink.go and dispatch.go when the master relays the framework's
// ACKNOWLEDGE to updates.go, which sends the next one.
//
// The built-in command executor (RunCommandExecutor, started as
// `allot executor`) is an ordinary executor process speaking the executor
// API through mesos-go's client, so command tasks, task groups and custom
// executors all travel the same path.
//
// The usage monitor (monitor.go, procfs.go) reports cumulative counters to
// the master every UsageInterval: host CPU time by mode, memory, and the
// bytes and busy time of physical disks and NICs only (stacked devices such
// as md, dm, loop, bridges and ifb would count the same bytes twice), and
// per executor its process tree's CPU time, RSS and storage bytes.
// Per-executor network bytes are not measurable in the host's network
// namespace and are reported as not measured.
//
// Sandbox files (files.go) are served Mesos-shaped at /files/browse,
// /files/read (offset/length, so a log can be tailed) and /files/download,
// confined to executors' sandboxes: a path that resolves outside one, by
// ".." or a symlink, is answered 403 and logged.
//
// HTTP authentication (httpauth.go): every route is registered with its
// class in one table; --authenticate-http-readonly and -readwrite put the
// read-only (state, monitor, sandbox files) and read-write (the profiler,
// served only with --pprof) classes behind a credential from
// --http-credentials, and --acls applies access_sandboxes to every
// sandbox read by the user the executor ran as.
//
// Isolation (isolator*.go, docs/isolation.md): every executor run lives in
// a container of an isolator chosen at start by --isolation. cgroups (v1 or
// v2, detected) gives it cpu shares by its cpus, a memory limit of its mem
// plus 32 MB executor overhead, and a pids limit; the kernel's OOM kill is
// reported as TASK_FAILED, SOURCE_AGENT, REASON_CONTAINER_LIMITATION_MEMORY.
// posix samples /proc and kills an executor over its memory the same way.
// An executor that runs as a task's user joins its v1 cgroups through the
// launcher, as root, before it runs (cgroup_join.go): no cgroup file is
// ever its user's.
//
// GPUs (gpu.go, gpu_isolator.go, gpu_cgroup.go, gpu_devices.go,
// docs/gpus.md): NVIDIA GPUs are detected through nvidia-smi, else the
// driver's device files, and advertised as gpus; gpu/nvidia gives each
// container whole GPUs by index, named in NVIDIA_VISIBLE_DEVICES and
// CUDA_VISIBLE_DEVICES and checkpointed with the executor. On cgroup v1 a
// devices cgroup per container lets it open only its own GPUs' device
// files (v2: not enforced, and said so); a container in an image gets its
// device files and the driver's tools and libraries (gpuSpec).
//
// Health checks (health.go, cmdexec_health.go): the built-in executor runs
// each task's TaskInfo.health_check (COMMAND, HTTP, TCP) with Mesos's
// timing and semantics, reports TASK_RUNNING with healthy set, and kills a
// task that fails consecutive_failures checks by its kill policy, ending it
// TASK_KILLED, healthy=false, REASON_TASK_HEALTH_CHECK_STATUS_UPDATED. The
// state machine is pure and runs on an injected clock.
//
// Time (clock.go): the agent and the command executor read policy time
// (graces, timeouts, retries, intervals, update timestamps) from a Clock,
// Config.Clock for the agent (nil: the wall clock), so tests advance it
// instead of sleeping; measurements of real processes keep the wall clock.
//
// Concurrency: Agent.mu guards executors, tasks and pending updates. Events
// to executors are queued on per-subscription streams; calls to the master
// are made by sender goroutines, never under the lock.
package agent
