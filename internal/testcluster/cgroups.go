package testcluster

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// CgroupRoot is where the host's cgroup hierarchies are mounted.
const CgroupRoot = "/sys/fs/cgroup"

// AgentCgroupParent is the cgroup under which an agent with work dir
// workDir creates its containers: allot/w<fnv32a of the absolute work dir>.
// It must match the agent's own naming (agent.containerParent); both are
// pinned to the same value by a test on each side.
func AgentCgroupParent(workDir string) string {
	abs, err := filepath.Abs(workDir)
	if err != nil {
		abs = workDir
	}
	h := fnv.New32a()
	h.Write([]byte(abs))
	return filepath.Join("allot", fmt.Sprintf("w%08x", h.Sum32()))
}

// AgentCgroups lists the container cgroups left under the parent of the
// agent with work dir workDir, in every hierarchy (v1 controllers, or the
// v2 unified one).
func AgentCgroups(workDir string) []string {
	var out []string
	for _, p := range agentParents(workDir) {
		ents, _ := os.ReadDir(p)
		for _, e := range ents {
			if e.IsDir() {
				out = append(out, filepath.Join(p, e.Name()))
			}
		}
	}
	return out
}

func agentParents(workDir string) []string {
	parent := AgentCgroupParent(workDir)
	cands := []string{filepath.Join(CgroupRoot, parent)}
	mounts, _ := os.ReadDir(CgroupRoot)
	for _, m := range mounts {
		cands = append(cands, filepath.Join(CgroupRoot, m.Name(), parent))
	}
	var out []string
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			out = append(out, c)
		}
	}
	return out
}

// RemoveAgentCgroups removes what an agent killed with SIGKILL leaves in
// the cgroup hierarchies: its (emptied) containers and their parent. The
// processes must be dead already (KillSandboxProcesses); a cgroup whose
// last member is still exiting is retried for a few seconds.
func RemoveAgentCgroups(workDir string) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := false
		for _, p := range agentParents(workDir) {
			ents, _ := os.ReadDir(p)
			for _, e := range ents {
				if e.IsDir() && syscall.Rmdir(filepath.Join(p, e.Name())) != nil {
					left = true
				}
			}
			if syscall.Rmdir(p) != nil {
				left = true
			}
		}
		if !left || time.Now().After(deadline) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}
