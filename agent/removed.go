package agent

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// An agent the operator marked gone (MARK_AGENT_GONE) had its tasks
// declared TASK_GONE_BY_OPERATOR or TASK_LOST to their frameworks, which may
// already have launched them again elsewhere. (One that merely stayed away
// longer than the master's --agent-ping-timeout is unreachable, not gone:
// it re-registers under its id with its tasks, and the master kills those
// whose end their framework already heard.) The master refuses a gone
// agent under its old id (REGISTER answered 410 Gone), as
// Mesos's master shuts down an agent that "attempted to re-register after
// removal". Mesos's agent then kills its executors, removes its checkpointed
// agent id and exits, to register afresh when restarted; this agent does
// the same without exiting, so that it rejoins under a new id without a
// supervisor's restart (and without crash-looping on the old one).

// removedByMaster kills every executor of the removed agent, forgets its
// tasks, their unacknowledged updates and its id, and returns the error
// that makes masterLoop register again (afresh). Takes a.mu.
func (a *Agent) removedByMaster(msg string) error {
	a.mu.Lock()
	old := a.id
	killed := 0
	for key, ex := range a.executors {
		ex.forgotten, ex.killing = true, true
		ex.tasks = map[string]*agentTask{}
		ex.queued = nil
		if ex.stream != nil {
			ex.stream.Close("agent removed by the master")
		}
		if ex.checkpoint {
			os.Remove(a.checkpointPath(ex))
			ex.checkpoint = false // a launch still under way writes none
		}
		// One still starting has no pid yet: it never subscribes (it is
		// no longer known) and killIfNotSubscribed kills it.
		if ex.pid > 0 && !ex.exited {
			a.iso.kill(ex.containerID, ex.pid, syscall.SIGKILL)
			killed++
		}
		delete(a.executors, key)
	}
	clear(a.frameworks)
	a.id = ""
	os.Remove(filepath.Join(a.cfg.WorkDir, "meta", "agent_id"))
	a.mu.Unlock()
	a.log.Warn().Str("agent_id", old).Int("executors_killed", killed).Str("master", msg).
		Msg("the master removed this agent: killed its executors, forgot its tasks and id; registering afresh")
	return errors.New("agent " + old + " removed by the master; registering afresh: " + msg)
}
