package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/allot-sched/allot/framework/elastic"
	"github.com/allot-sched/allot/framework/eventlog"
)

// iSpark's cache-preserving scale-down, the driver's side.
//
// A decision whose releases hand their load to a receiver (elastic.ISpark)
// is carried out here, not in applyLocked: the target drops at once (so the
// backend launches no replacement), then a goroutine waits for the job
// boundary, runs the moves (each receiver fetches the giver's cached
// partitions over the block managers' HTTP transport, POST /fetch), points
// the driver's cache locations at the receiver for every partition the
// receiver confirmed holding, and only then releases the givers.
//
// Job boundary: allot has no external shuffle service, so a giver's map
// outputs are read from it until every stage reading them is done. This
// first version releases a giver only between jobs (it holds jobMu for the
// handoff, so the next job waits for it): map outputs of finished jobs
// that a later job reads again are recomputed from lineage, as after any
// executor loss. The wait for the boundary is logged ("waited ... for the
// job boundary").
//
// A giver that dies mid-handoff: partitions already confirmed are read on
// their receiver; the rest were lost with the giver (executorLostLocked,
// from the backend or from the probe here) and missingLocked recomputes
// them from lineage when a stage reads them. A giver that is alive but
// whose move failed (the receiver gone) is kept, and the target restored.

// handoffTimeout bounds one POST /fetch.
const handoffTimeout = 2 * time.Minute

// startHandoffLocked starts the handoff for d if d needs one, and reports
// whether it did. Caller holds c.mu.
func (c *Context) startHandoffLocked(d elastic.Decision) bool {
	need := len(d.Moves) > 0
	for _, r := range d.Releases {
		need = need || r.Receiver != ""
	}
	if !need {
		return false
	}
	c.pool.handoff = true
	go c.pushTarget()
	go c.handoff(d, c.clock.Now())
	return true
}

// handoff runs d's moves, then its releases, at the next job boundary.
func (c *Context) handoff(d elastic.Decision, decided time.Time) {
	c.jobMu.Lock()
	defer c.jobMu.Unlock()
	defer func() {
		c.mu.Lock()
		c.pool.handoff = false
		c.mu.Unlock()
	}()
	boundary := c.clock.Now()
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return
	}
	incomplete := map[string]bool{}
	for _, m := range d.Moves {
		if !c.runMove(m) {
			incomplete[m.From] = true
		}
	}
	for _, r := range d.Releases {
		c.releaseGiver(r, incomplete[r.Executor])
	}
	c.noteScaledDown()
	c.cfg.Logf("iSpark scale-down: %d givers, %d moves; waited %v for the job boundary, handoff took %v",
		len(d.Releases), len(d.Moves), boundary.Sub(decided).Round(time.Millisecond), c.clock.Now().Sub(boundary).Round(time.Millisecond))
}

// runMove asks m.To to fetch m's partitions from m.From and relocates each
// one it confirms. It reports whether every partition moved.
func (c *Context) runMove(m elastic.Move) bool {
	c.mu.Lock()
	from, to := c.pool.execs[m.From], c.pool.execs[m.To]
	var fromURL, toURL string
	var fromPID int
	if from != nil && to != nil {
		fromURL, toURL, fromPID = from.url, to.url, from.pid
	}
	c.mu.Unlock()
	if fromURL == "" {
		c.cfg.Logf("iSpark handoff %s -> %s: an executor is gone; its partitions are recomputed from lineage", m.From, m.To)
		return false
	}
	c.cfg.Logf("iSpark handoff: giver %s (pid %d) -> receiver %s, %d partitions", m.From, fromPID, m.To, len(m.Partitions))
	start := c.clock.Now()
	names := make([]string, len(m.Partitions))
	for i, p := range m.Partitions {
		names[i] = cacheBlock(p.Node, p.Part)
	}
	evict := make([]string, len(m.Evict))
	for i, p := range m.Evict {
		evict[i] = cacheBlock(p.Node, p.Part)
	}
	// One request for the lot, or one per partition with a pause between
	// (the HandoffPause test hook).
	batch := len(names)
	if c.cfg.HandoffPause > 0 {
		batch = 1
	}
	moved, bytes := 0, int64(0)
	for i := 0; i < len(names); i += batch {
		rep, err := c.postFetch(toURL, fetchRequest{From: fromURL, Names: names[i:min(i+batch, len(names))], Evict: evict})
		evict = nil
		if rep != nil {
			moved += c.relocate(m.From, m.To, toURL, rep.Held)
			bytes += rep.Bytes
		}
		if err != nil {
			c.cfg.Logf("iSpark handoff %s -> %s stopped after %d of %d partitions: %v", m.From, m.To, moved, len(names), err)
			break
		}
		if c.cfg.HandoffPause > 0 && i+batch < len(names) {
			c.cfg.Logf("iSpark handoff %s -> %s: %d of %d partitions moved, pausing %v (test hook)", m.From, m.To, moved, len(names), c.cfg.HandoffPause)
			c.pauseHandoff(m.From)
		}
	}
	c.emit(&eventlog.PartitionsMoved{Time: c.now(), From: m.From, To: m.To, Requested: len(names), Count: moved, Bytes: bytes,
		Evicted: len(m.Evict), DurationS: c.clock.Now().Sub(start).Seconds()})
	return moved == len(names)
}

// postFetch sends one POST /fetch. A reply that names an error still says
// what the receiver holds.
func (c *Context) postFetch(url string, req fetchRequest) (*fetchReply, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), handoffTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/fetch", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("receiver answered %s", resp.Status)
	}
	var rep fetchReply
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return nil, err
	}
	if rep.Error != "" {
		return &rep, fmt.Errorf("%s", rep.Error)
	}
	return &rep, nil
}

// relocate points the driver at receiver for each held block and returns
// how many it relocated. A location still on the giver, or already
// forgotten with a giver that died meanwhile, moves: the receiver holds the
// bytes, and no job runs during a handoff to have recomputed them
// elsewhere. A location elsewhere (the receiver's own copy) is left.
func (c *Context) relocate(giver, receiver, url string, held []string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pool.execs[receiver] == nil {
		return 0 // the receiver died: what it fetched went with it
	}
	n := 0
	for _, name := range held {
		var node, part int
		if _, err := fmt.Sscanf(name, "rdd_%d_%d", &node, &part); err != nil {
			continue
		}
		if c.dag.cacheLocs[node] == nil {
			c.dag.cacheLocs[node] = map[int]loc{}
		}
		if l, ok := c.dag.cacheLocs[node][part]; ok && l.Exec != giver && l.Exec != receiver {
			continue
		}
		c.dag.cacheLocs[node][part] = loc{Exec: receiver, URL: url}
		n++
	}
	return n
}

// releaseGiver releases a giver whose partitions are safe. One whose move
// did not complete is probed: dead, it is forgotten (lineage recomputes
// what did not move); alive, it stays and the target is restored.
func (c *Context) releaseGiver(r elastic.Release, incomplete bool) {
	c.mu.Lock()
	e := c.pool.execs[r.Executor]
	c.mu.Unlock()
	if e == nil {
		return // lost meanwhile: the executor-lost path has run
	}
	if incomplete && c.alive(e.url) {
		c.mu.Lock()
		c.pool.target++
		c.mu.Unlock()
		c.cfg.Logf("iSpark: handoff from %s incomplete and it still answers: kept", r.Executor)
		go c.pushTarget()
		return
	}
	reason := r.Reason
	if incomplete {
		reason = "died during an iSpark handoff; partitions not moved are recomputed from lineage"
	}
	c.mu.Lock()
	c.executorLostLocked(r.Executor, reason)
	c.mu.Unlock()
	c.pushTarget()
	c.backend.release(r.Executor)
}

// alive says whether an executor answers /health within 2s.
func (c *Context) alive(url string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
	resp, err := c.http.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
