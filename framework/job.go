package framework

import (
	"errors"
	"time"

	"github.com/allot-sched/allot/framework/eventlog"
)

// jobTick bounds how long the job loop sleeps without news, so locality
// waits expire and lost outputs are noticed.
const jobTick = 100 * time.Millisecond

// job is one run of runJob: the stages it needs and its tasks. Its own
// fields belong to the goroutine running the job; what it shares with the
// rest of the driver (dag, pool, the stages' per-run fields) it touches
// under c.mu.
type job struct {
	c                *Context
	action, savePath string
	final            *stage
	order            []*stage // final and its ancestors, parents first
	results          []*taskResult
	start            time.Time

	queue    []*taskItem             // tasks waiting for a slot
	running  map[int64]*taskItem     // tasks sent to an executor
	inFlight map[*stage]map[int]bool // partitions queued or running
	failures map[string]int          // stage/partition -> failed attempts
	done     chan completion
}

type taskItem struct {
	id       int64
	stage    *stage
	part     int
	attempt  int
	queuedAt time.Time
	launched time.Time // when it was sent to exec (its wait for a slot ends)
	exec     string
}

type completion struct {
	t   *taskItem
	res *taskResult
	err error // transport error: the executor could not be reached
}

// runJob computes every partition of top and runs the action on it. Each
// round submits the stages whose parents are complete, dispatches queued
// tasks to free slots, then waits for a completion, a wake-up or a tick.
func (c *Context) runJob(top *node, action, savePath string) ([]*taskResult, error) {
	c.awaitJobGate()
	c.awaitScaleDown()
	c.jobMu.Lock()
	defer c.jobMu.Unlock()
	defer c.jobsDone.Add(1)
	j, err := c.newJob(top, action, savePath)
	if err != nil {
		return nil, err
	}
	defer j.drain()
	defer c.setJobStages(nil)
	tick := c.clock.NewTicker(jobTick)
	defer tick.Stop()
	for {
		finished, err := j.round()
		if err == nil && !finished {
			err = j.wait(tick.C())
		}
		if err != nil {
			c.emit(&eventlog.JobEnd{Time: c.now(), Success: false, Error: err.Error()})
			return nil, err
		}
		if finished {
			c.emit(&eventlog.JobEnd{Time: c.now(), Success: true, DurationS: c.clock.Now().Sub(j.start).Seconds()})
			return j.results, nil
		}
	}
}

func (c *Context) newJob(top *node, action, savePath string) (*job, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("context is closed")
	}
	final := c.dag.buildStage(top, nil)
	c.mu.Unlock()
	j := &job{c: c, action: action, savePath: savePath, final: final, results: make([]*taskResult, top.Parts), start: c.clock.Now(),
		running: map[int64]*taskItem{}, inFlight: map[*stage]map[int]bool{}, failures: map[string]int{}, done: make(chan completion, 1024)}
	c.emit(&eventlog.JobStart{Time: c.now(), Action: action, ResultStage: final.id, Partitions: top.Parts})
	c.mu.Lock()
	j.order = stageOrder(final)
	c.jobStages = j.order
	c.mu.Unlock()
	return j, nil
}

// drain answers for the tasks still running when the job ends (it failed):
// their completions arrive on done, and nobody else reads it.
func (j *job) drain() {
	if n := len(j.running); n > 0 {
		go func() {
			for ; n > 0; n-- {
				<-j.done
			}
		}()
	}
}

// round submits ready stages and dispatches queued tasks. It reports
// whether every stage is complete, or the failure that aborts the job.
func (j *job) round() (finished bool, err error) {
	c := j.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fatal != nil {
		return false, c.fatal
	}
	if j.submitLocked() {
		c.pool.pending = 0
		return true, nil
	}
	j.dispatchLocked()
	c.pool.pending = len(j.queue)
	if len(c.pool.execs) == 0 && c.pool.everExec && len(j.queue) > 0 {
		// Every executor is gone: make sure the backend replaces one.
		c.pool.target = max(c.pool.target, 1)
		go c.pushTarget()
	}
	return false, nil
}

// submitLocked submits every stage whose parents are complete, queueing a
// task for each missing partition not already queued or running, and marks
// stages complete. It returns whether every stage is complete.
func (j *job) submitLocked() (allDone bool) {
	c := j.c
	allDone = true
	for _, s := range j.order {
		miss := c.missingLocked(s, j.results)
		if len(miss) == 0 {
			if s.submitted && s.end.IsZero() && len(j.inFlight[s]) == 0 {
				c.stageCompletedLocked(s)
			}
			continue
		}
		allDone = false
		if !c.parentsReadyLocked(s) {
			continue
		}
		if j.inFlight[s] == nil {
			j.inFlight[s] = map[int]bool{}
		}
		if !s.submitted || !s.end.IsZero() {
			// First run, or a resubmission of a stage whose outputs were lost.
			c.stageSubmittedLocked(s, len(miss))
		}
		for _, p := range miss {
			if !j.inFlight[s][p] {
				j.inFlight[s][p] = true
				c.dag.nextTask++
				j.queue = append(j.queue, &taskItem{id: c.dag.nextTask, stage: s, part: p, queuedAt: c.clock.Now()})
			}
		}
	}
	return allDone
}

// wait sleeps until something happens, then records every completion that
// has arrived. An error fails the job.
func (j *job) wait(tick <-chan time.Time) error {
	select {
	case <-j.c.wake:
		return nil
	case <-tick:
		return nil
	case comp := <-j.done:
		for {
			if err := j.complete(comp); err != nil {
				return err
			}
			select {
			case comp = <-j.done:
			default:
				return nil
			}
		}
	}
}

// complete records one task's completion: its executor's slot is free
// again, and the task is either done or queued again as a new attempt.
func (j *job) complete(comp completion) error {
	c := j.c
	t := comp.t
	delete(j.running, t.id)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.pool.execs[t.exec]; e != nil {
		e.running--
		if e.running == 0 {
			e.idleSince = c.clock.Now()
		}
	}
	requeue, err := c.completeLocked(comp, j.results, j.failures)
	if requeue {
		t2 := *t
		c.dag.nextTask++
		t2.id, t2.exec, t2.queuedAt = c.dag.nextTask, "", c.clock.Now()
		j.queue = append(j.queue, &t2)
	} else {
		delete(j.inFlight[t.stage], t.part)
	}
	return err
}

// stageSubmittedLocked starts a stage's run. Caller holds c.mu.
func (c *Context) stageSubmittedLocked(s *stage, tasks int) {
	s.submitted, s.start, s.end = true, c.clock.Now(), time.Time{}
	s.windows = map[string]*usageWindow{}
	parents := []int{}
	for _, p := range s.parents {
		parents = append(parents, p.id)
	}
	kind := "result"
	if s.write != nil {
		kind = "shuffle_map"
	}
	c.emit(&eventlog.StageSubmitted{Time: c.now(), Stage: s.id, Key: s.key, Name: s.name, StageKind: kind, Tasks: tasks, Partitions: s.top.Parts, Parents: parents})
}

// stageCompletedLocked ends a stage's run and queues its usage windows for
// the event log. Caller holds c.mu.
func (c *Context) stageCompletedLocked(s *stage) {
	s.end = c.clock.Now()
	c.emit(&eventlog.StageCompleted{Time: unixSeconds(s.end), Stage: s.id, Name: s.name, Start: unixSeconds(s.start), End: unixSeconds(s.end),
		DurationS: s.end.Sub(s.start).Seconds(), Executors: len(s.windows)})
	for _, w := range s.windows {
		c.usage = append(c.usage, w)
	}
	s.windows = map[string]*usageWindow{}
	c.flushUsageLocked(false)
}

// setJobStages records the running job's stages (nil: none runs).
func (c *Context) setJobStages(s []*stage) {
	c.mu.Lock()
	c.jobStages = s
	c.mu.Unlock()
}
