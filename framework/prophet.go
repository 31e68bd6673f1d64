package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/framework/eventlog"
	"github.com/allot-sched/allot/framework/placement"
	"github.com/allot-sched/allot/internal/tlsconf"
	"github.com/allot-sched/allot/profile"
)

// masterTimeout bounds one question to the master's operator API: a
// placement or backoff round that cannot ask in time goes on without the
// answer rather than hold up offers or dispatch.
const masterTimeout = 2 * time.Second

// masterGet GETs path from the masters in Config.Master in turn (a follower
// redirects to the leader) and decodes the first 200 answer's JSON into v.
func (c *Context) masterGet(path string, v any) error {
	var last error
	for _, m := range strings.Split(c.cfg.Master, ",") {
		m = strings.TrimSpace(m)
		ctx, cancel := context.WithTimeout(context.Background(), masterTimeout)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, tlsconf.URL(c.masterTLS != nil, m, path), nil)
		if err != nil {
			cancel()
			last = err
			continue
		}
		resp, err := c.http.Do(req)
		if err != nil {
			cancel()
			last = tlsconf.Explain(err, "master at "+m)
			continue
		}
		err = nil
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s from %s: %s", path, m, resp.Status)
		} else if derr := json.NewDecoder(resp.Body).Decode(v); derr != nil {
			err = fmt.Errorf("GET %s from %s: %w", path, m, derr)
		}
		resp.Body.Close()
		cancel()
		if err == nil {
			return nil
		}
		last = err
	}
	return last
}

// ownExecutors lists, per agent, the launch times of this framework's
// executors that still run (or are starting). Takes b.mu.
func (b *mesosBackend) ownExecutors() (need int, own map[string][]time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	own = map[string][]time.Time{}
	for _, t := range b.tasks {
		if !t.released && !taskstate.IsTerminal(t.state) {
			own[t.agent] = append(own[t.agent], t.launched)
		}
	}
	return b.want - b.live(), own
}

// prophetOrder puts first the offers of the agents Prophet's score prefers
// for the executors still needed, when the offers span more agents than
// that; otherwise, or when the master cannot say, it returns offers as they
// are (placement "first"). Each agent's timeline is the master's (GET
// /timelines) without this framework's executors, plus this framework's
// own executors anchored at their launches as the backend knows them, so
// that under a master keeping no timelines the framework still sees its
// own. Takes b.mu briefly; asks the master without it.
func (b *mesosBackend) prophetOrder(offers []mesos.Offer) []mesos.Offer {
	need, own := b.ownExecutors()
	agents := map[string]bool{}
	for _, o := range offers {
		agents[o.AgentID.Value] = true
	}
	if b.profile == nil || len(b.profile.Stages) == 0 || need <= 0 || len(agents) <= need {
		return offers
	}
	var doc api.Timelines
	if err := b.c.masterGet(api.TimelinesPath, &doc); err != nil {
		b.c.cfg.Logf("placement prophet: no timelines from the master (%v); placing in offer order", err)
		return offers
	}
	byAgent := map[string]*api.AgentTimeline{}
	for i := range doc.Agents {
		byAgent[doc.Agents[i].AgentID] = &doc.Agents[i]
	}
	self := ""
	if b.client != nil {
		self = b.client.ID()
	}
	cands := make([]placement.Candidate, len(offers))
	for i, o := range offers {
		id := o.AgentID.Value
		cands[i].Agent = id
		if at := byAgent[id]; at != nil {
			cands[i].Timeline = b.withOwn(at, self, own[id])
		}
	}
	chosen := placement.Choose(b.c.clock.Now(), b.profile, cands, need, profile.PaperOptions)
	ev := &eventlog.ExecutorsPlaced{Time: b.c.now(), Offered: len(agents)}
	first := make([]mesos.Offer, 0, len(offers))
	taken := map[int]bool{}
	for _, ch := range chosen {
		first = append(first, offers[ch.Index])
		taken[ch.Index] = true
		ev.Agents, ev.Scores = append(ev.Agents, ch.Agent), append(ev.Scores, ch.Score)
	}
	for i, o := range offers {
		if !taken[i] {
			first = append(first, o)
		}
	}
	b.c.emit(ev)
	b.c.cfg.Logf("placement prophet: %d executors on %v of %d agents offered (scores %v)", need, ev.Agents, len(agents), ev.Scores)
	return first
}

// withOwn rebuilds an agent's timeline without framework self's executors
// as the master anchored them, then adds them as this backend launched
// them; nil if the master's timeline does not rebuild.
func (b *mesosBackend) withOwn(at *api.AgentTimeline, self string, launches []time.Time) *profile.Timeline {
	tl, err := at.Timeline(self)
	if err != nil {
		b.c.cfg.Logf("placement prophet: %v", err)
		return nil
	}
	for k, l := range launches {
		if err := tl.Add(fmt.Sprintf("self/%d", k), l, b.profile); err != nil {
			return nil
		}
	}
	return tl
}
