package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/allot-sched/allot/framework/dispatch"
	"github.com/allot-sched/allot/framework/eventlog"
)

// dispatchLocked starts queued tasks on free executor slots, as the
// dispatcher chooses, and keeps the rest queued. A task whose parent stage
// lost outputs with an executor waits for them to be recomputed rather
// than fail fetching them. Caller holds c.mu.
func (j *job) dispatchLocked() {
	c := j.c
	if len(j.queue) == 0 || len(c.pool.execs) == 0 {
		return
	}
	slots := make([]dispatch.Slot, 0, len(c.pool.execs))
	for _, e := range c.pool.execs {
		slots = append(slots, dispatch.Slot{Exec: e.id, Host: e.host, Cores: e.cores, Running: e.running})
	}
	dispatch.Order(slots)
	now := c.clock.Now()
	rest := j.queue[:0]
	for _, t := range j.queue {
		if !c.parentsReadyLocked(t.stage) {
			rest = append(rest, t)
			continue
		}
		dt := dispatch.Task{ID: t.id, Stage: t.stage.id, Partition: t.part, Attempt: t.attempt, QueuedAt: t.queuedAt,
			Preferred: c.dag.preferred(t.stage, t.part)}
		i := c.dispatcher.Choose(now, dt, slots)
		if i < 0 {
			rest = append(rest, t)
			continue
		}
		slots[i].Running++
		e := c.pool.execs[slots[i].Exec]
		e.running++
		t.exec, t.launched = e.id, now
		j.running[t.id] = t
		go c.send(e.url, t, c.specLocked(t, j.action, j.savePath), j.done)
	}
	j.queue = rest
}

// specLocked is what the executor needs to run t: the stage's lineage and
// where its inputs are. Caller holds c.mu.
func (c *Context) specLocked(t *taskItem, action, savePath string) *taskSpec {
	s := t.stage
	spec := &taskSpec{ID: t.id, Stage: s.id, Partition: t.part, Attempt: t.attempt, Top: s.top.ID, Nodes: s.nodes, Write: s.write}
	if s.write == nil {
		spec.Action, spec.SavePath = action, savePath
	}
	for _, n := range s.nodes {
		if n.Op == "shuffled" {
			if spec.Fetch == nil {
				spec.Fetch = map[int][]loc{}
			}
			for _, sid := range n.Shuffle {
				locs := make([]loc, len(c.dag.outputs[sid]))
				for m, l := range c.dag.outputs[sid] {
					if e := c.pool.execs[l.Exec]; e != nil {
						locs[m] = loc{Exec: e.id, URL: e.url}
					}
				}
				spec.Fetch[sid] = locs
			}
		}
		if n.Cached {
			if l, ok := c.dag.cacheLocs[n.ID][t.part]; ok {
				if spec.CacheLocs == nil {
					spec.CacheLocs = map[int]loc{}
				}
				spec.CacheLocs[n.ID] = l
			}
		}
	}
	return spec
}

// send runs one task on an executor and reports its completion.
func (c *Context) send(url string, t *taskItem, spec *taskSpec, done chan<- completion) {
	b, err := json.Marshal(spec)
	if err != nil {
		done <- completion{t: t, res: &taskResult{Error: "encoding task: " + err.Error()}}
		return
	}
	resp, err := c.http.Post(url+"/task", "application/json", bytes.NewReader(b))
	if err != nil {
		done <- completion{t: t, err: err}
		return
	}
	defer resp.Body.Close()
	var res taskResult
	if resp.StatusCode != http.StatusOK {
		var msg bytes.Buffer
		msg.ReadFrom(resp.Body)
		done <- completion{t: t, res: &taskResult{Error: fmt.Sprintf("executor answered %s: %s", resp.Status, strings.TrimSpace(msg.String()))}}
		return
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil {
		done <- completion{t: t, err: fmt.Errorf("reading task result: %w", err)}
		return
	}
	done <- completion{t: t, res: &res}
}

// completeLocked records a task's outcome and writes its task_end event. It
// returns whether the task must run again, and an error that fails the
// job. Caller holds c.mu.
func (c *Context) completeLocked(comp completion, results []*taskResult, failures map[string]int) (bool, error) {
	t := comp.t
	ev := &eventlog.TaskEnd{Time: c.now(), Task: t.id, Stage: t.stage.id, Partition: t.part, Attempt: t.attempt, Executor: t.exec}
	defer c.emit(ev)
	if comp.err != nil {
		// The executor did not answer: it is gone (kill -9, a lost agent).
		// Its outputs are recomputed from lineage; this is not the task's fault.
		ev.Error = "executor unreachable: " + comp.err.Error()
		if c.pool.execs[t.exec] != nil {
			c.executorLostLocked(t.exec, "unreachable while running a task: "+comp.err.Error())
		}
		return true, nil
	}
	res := comp.res
	m := res.Metrics
	ev.SetMetrics(eventlog.TaskMetrics{DurationS: float64(m.End-m.Start) / 1e9, CPUTimeS: float64(m.CPUNanos) / 1e9, BytesRead: m.BytesRead,
		ShuffleWrite: m.ShuffleWrite, ShuffleFetch: m.ShuffleFetch, RecordsOut: m.RecordsOut, CacheHit: m.CacheHit,
		RunQueueS: float64(m.RunQueueNanos) / 1e9})
	if res.Fetch != nil {
		ev.Error = res.Error
		return c.fetchFailedLocked(t, res)
	}
	if res.Error != "" {
		ev.Error = res.Error
		return c.taskFailedLocked(t, res, failures)
	}
	ev.Success = true
	c.taskSucceededLocked(t, res, results)
	return false, nil
}

// fetchFailedLocked handles a task that could not fetch a shuffle block:
// the map output is forgotten (its stage recomputes it), the executor that
// failed to serve it is probed, and the task runs again. Caller holds c.mu.
func (c *Context) fetchFailedLocked(t *taskItem, res *taskResult) (bool, error) {
	s := t.stage
	s.fetchFails++
	if l := c.dag.outputs[res.Fetch.Shuffle]; res.Fetch.Map < len(l) && l[res.Fetch.Map].Exec == res.Fetch.Exec {
		c.dag.outputs[res.Fetch.Shuffle][res.Fetch.Map] = loc{}
	}
	if s.fetchFails > 50 {
		return false, fmt.Errorf("stage %d (%s): too many shuffle fetch failures; last: %s", s.id, s.name, res.Error)
	}
	if e := c.pool.execs[res.Fetch.Exec]; e != nil {
		go c.probe(e.id, e.url)
	}
	return true, nil
}

// taskFailedLocked retries a failed task until it has failed
// MaxTaskFailures times, which fails the job. Caller holds c.mu.
func (c *Context) taskFailedLocked(t *taskItem, res *taskResult, failures map[string]int) (bool, error) {
	s := t.stage
	key := fmt.Sprintf("%d/%d", s.id, t.part)
	failures[key]++
	if failures[key] >= c.cfg.MaxTaskFailures {
		return false, fmt.Errorf("task for partition %d of stage %d (%s) failed %d times; last error: %s", t.part, s.id, s.name, failures[key], res.Error)
	}
	t.attempt++
	return true, nil
}

// taskSucceededLocked records where a task's output is (a map output, the
// result, cached partitions) and adds its metrics to the stage's usage
// window on the executor. Caller holds c.mu.
func (c *Context) taskSucceededLocked(t *taskItem, res *taskResult, results []*taskResult) {
	s := t.stage
	e := c.pool.execs[t.exec]
	if e == nil {
		// The executor was lost after answering: its outputs went with it,
		// and the stage's missing partitions are submitted again.
		return
	}
	if s.write != nil {
		c.dag.outputs[s.write.ID][t.part] = loc{Exec: e.id, URL: e.url}
	} else {
		results[t.part] = res
	}
	c.noteCachedLocked(res.Cached, t.part)
	for _, id := range res.Cached {
		if c.dag.cacheLocs[id] == nil {
			c.dag.cacheLocs[id] = map[int]loc{}
		}
		c.dag.cacheLocs[id][t.part] = loc{Exec: e.id, URL: e.url}
	}
	m := res.Metrics
	w := s.windows[e.id]
	if w == nil {
		w = &usageWindow{stage: s.id, key: s.key, exec: e.id, launch: e.registered.UnixNano(), start: m.Start, end: m.End}
		s.windows[e.id] = w
	}
	w.start, w.end = min(w.start, m.Start), max(w.end, m.End)
	w.tasks++
	w.cpuTime += m.CPUNanos
	w.runQueue += m.RunQueueNanos
	e.util.noteTask(c.pool.lastEpoch, t.queuedAt, t.launched, c.clock.Now(), m.RunQueueNanos)
	w.bytesRead += m.BytesRead
	w.shuffleWrite += m.ShuffleWrite
	w.shuffleFetch += m.ShuffleFetch
}

// probe checks an executor that failed to serve a block; an executor that
// does not answer is lost.
func (c *Context) probe(id, url string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	resp, err := c.http.Do(req)
	if err == nil {
		resp.Body.Close()
		return
	}
	c.executorLost(id, "did not serve a block and does not answer: "+err.Error())
}
