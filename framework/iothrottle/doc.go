// Package iothrottle makes an agent's advertised bandwidths real on one
// machine: a token bucket per agent and device, shared by every executor
// process of that agent through a small state file under flock(2), so the
// executors on one agent together read and write files at most disk_bw and
// fetch over sockets at most net_bw (MB/s). It exists for live experiments
// (the Prophet comparison on `allot dev`) where several agents share
// one disk and one loopback and bandwidth would otherwise never bind.
//
// The agent opts in (allot agent/dev --throttle-io) and passes the bucket
// directory and its capacities in the environment (EnvDir, EnvDiskBW,
// EnvNetBW); without them FromEnv returns nil buckets, whose methods cost a
// nil check and change nothing.
package iothrottle
