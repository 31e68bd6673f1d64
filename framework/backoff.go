package framework

import (
	"fmt"
	"sort"
	"time"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/api/taskstate"
	"github.com/allot-sched/allot/framework/dispatch"
	"github.com/allot-sched/allot/framework/eventlog"
	"github.com/allot-sched/allot/profile"
)

// Prophet's task backoff in the runtime. With
// Config.Backoff the driver's dispatcher is wrapped in a dispatch.Backoff,
// and a loop asks the master every BackoffInterval for what the agents
// hosting this application's executors measured (/state usage_rates: the
// disk's busy fraction and delivered MB/s; the NIC's MB/s) and who is
// predicted to use them (this application's executors by its declared
// profile, anchored at their launches; other frameworks' executors by the
// master's /timelines where it keeps them). One loop pass is one backoff
// round. The thresholds are dispatch.DefaultBackoff's (the simulator's):
// contested when delivered < 0.9 x capacity while busy (disk busy >= 0.9;
// a NIC is busy when its users' predicted demand exceeds it), a flagged
// executor runs at most a quarter of its cores (at least one), for 20
// rounds after the last one that flagged it. The signal is as fresh as the agents' --usage-interval.

// DefaultBackoffInterval is Config.BackoffInterval's default.
const DefaultBackoffInterval = time.Second

// ownExec is one of this application's executors where it runs.
type ownExec struct {
	id, agent string
	launched  time.Time
}

// device names a Device of one round for the logs.
type device struct {
	agent, resource string // resource: disk_bw or net_bw
	contested       bool
}

// predictedAt is the peak of r that p predicts at offset since launch (0
// between and after stages).
func predictedAt(p *profile.Profile, offset time.Duration, r profile.Resource) float64 {
	for _, s := range p.Stages {
		if offset >= s.Start && offset < s.End {
			return s.Peak(r)
		}
	}
	return 0
}

// backoffDevices builds one round's devices: the disk and the NIC of every
// agent that runs one of own and has usage rates, with their predicted
// users. tls may be nil (no timelines); self is this framework's id, whose
// executors in tls are skipped because own has them as launched.
func backoffDevices(now time.Time, st *operator.State, tls *api.Timelines, self string, own []ownExec, p *profile.Profile,
	params dispatch.BackoffParams) ([]dispatch.Device, []device) {
	byAgent := map[string][]ownExec{}
	for _, x := range own {
		byAgent[x.agent] = append(byAgent[x.agent], x)
	}
	others := map[string][]api.TimelineExecutor{}
	if tls != nil {
		for _, a := range tls.Agents {
			for _, x := range a.Executors {
				if x.FrameworkID != self {
					others[a.AgentID] = append(others[a.AgentID], x)
				}
			}
		}
	}
	var devs []dispatch.Device
	var names []device
	for _, s := range st.Slaves {
		mine := byAgent[s.ID]
		if len(mine) == 0 || s.Rates == nil {
			continue
		}
		r := api.UsageRates{DiskReadMBps: s.Rates.DiskReadMBps, DiskWriteMBps: s.Rates.DiskWriteMBps,
			NetRxMBps: s.Rates.NetRxMBps, NetTxMBps: s.Rates.NetTxMBps, DiskBusy: s.Rates.DiskBusy}
		users := func(res profile.Resource) []dispatch.User {
			var u []dispatch.User
			for _, x := range mine {
				u = append(u, dispatch.User{Exec: x.id, Predicted: predictedAt(p, now.Sub(x.launched), res)})
			}
			for i, x := range others[s.ID] {
				xp := x.Profile()
				u = append(u, dispatch.User{Exec: fmt.Sprintf("other:%s/%d", x.FrameworkID, i),
					Predicted: predictedAt(&xp, now.Sub(time.Unix(0, x.LaunchUnixNano)), res)})
			}
			return u
		}
		disk := params.DiskDevice(s.Resources["disk_bw"], r, users(profile.Disk))
		net := dispatch.NetDevice(s.Resources["net_bw"], r, users(profile.Net))
		for _, d := range []struct {
			dev  dispatch.Device
			name string
		}{{disk, "disk_bw"}, {net, "net_bw"}} {
			devs = append(devs, d.dev)
			names = append(names, device{agent: s.ID, resource: d.name,
				contested: d.dev.Capacity > 0 && d.dev.Busy && d.dev.Delivered < params.Trigger*d.dev.Capacity})
		}
	}
	return devs, names
}

// wrapBackoff puts a dispatch.Backoff around the dispatcher when
// Config.Backoff asks for one (nil otherwise).
func (c *Context) wrapBackoff() (*dispatch.Backoff, error) {
	if !c.cfg.Backoff {
		return nil, nil
	}
	if c.cfg.Local {
		c.cfg.Logf("task backoff: needs a master's usage reports; off with --local")
		return nil, nil
	}
	params := dispatch.DefaultBackoff
	if c.cfg.BackoffParams != nil {
		params = *c.cfg.BackoffParams
	}
	if err := params.Validate(); err != nil {
		return nil, err
	}
	bo := &dispatch.Backoff{Inner: c.dispatcher, Params: params}
	c.dispatcher = bo
	return bo, nil
}

// backoffLoop runs the backoff rounds until the driver closes.
func (c *Context) backoffLoop(b *mesosBackend, bo *dispatch.Backoff) {
	every := c.cfg.BackoffInterval
	if every <= 0 {
		every = DefaultBackoffInterval
	}
	if b.profile == nil {
		c.cfg.Logf("task backoff: no declared profile (Config.Profile or DemandModel), so no executor is predicted to use a device; nothing will be backed off")
	}
	t := c.clock.NewTicker(every)
	defer t.Stop()
	flagged := map[string]bool{}
	for {
		select {
		case <-c.stopBg:
			return
		case <-t.C():
		}
		c.backoffRound(b, bo, flagged)
	}
}

// backoffRound asks the master, runs one round and logs what started and
// lifted. flagged is the previous round's flagged executors, updated.
func (c *Context) backoffRound(b *mesosBackend, bo *dispatch.Backoff, flagged map[string]bool) {
	var st operator.State
	if err := c.masterGet("/state", &st); err != nil {
		c.cfg.Logf("task backoff: no usage from the master this round: %v", err)
		return
	}
	var tls *api.Timelines
	if b.profile != nil {
		var doc api.Timelines
		if c.masterGet(api.TimelinesPath, &doc) == nil {
			tls = &doc
		}
	}
	own := b.running()
	prof := b.profile
	if prof == nil {
		prof = &profile.Profile{}
	}
	self := ""
	if b.client != nil {
		self = b.client.ID()
	}
	devs, names := backoffDevices(c.clock.Now(), &st, tls, self, own, prof, bo.Params)
	bo.Round(devs)
	c.logBackoff(own, devs, names, bo, flagged)
}

// logBackoff writes an event and a log line for every executor of own whose
// backoff started or lifted this round.
func (c *Context) logBackoff(own []ownExec, devs []dispatch.Device, names []device, bo *dispatch.Backoff, flagged map[string]bool) {
	lifted := false
	for _, x := range own {
		now := bo.Flagged(x.id)
		if now == flagged[x.id] {
			continue
		}
		flagged[x.id] = now
		ev := &eventlog.TaskBackoff{Time: c.now(), Executor: x.id, Agent: x.agent, On: now}
		if !now {
			lifted = true
			c.emit(ev)
			c.cfg.Logf("task backoff lifted on %s (agent %s)", x.id, x.agent)
			continue
		}
		for i, d := range names {
			if d.agent == x.agent && d.contested && usesDevice(devs[i], x.id) {
				ev.Device, ev.Capacity, ev.Delivered = d.resource, devs[i].Capacity, devs[i].Delivered
				break
			}
		}
		c.emit(ev)
		c.cfg.Logf("task backoff on %s (agent %s): %s delivers %.1f of %.1f MB/s while busy; at most %.0f%% of its cores get tasks for %d rounds",
			x.id, x.agent, ev.Device, ev.Delivered, ev.Capacity, 100*bo.Params.Factor, bo.Params.Hold)
	}
	live := map[string]bool{}
	for _, x := range own {
		live[x.id] = true
	}
	for id := range flagged {
		if !flagged[id] || !live[id] {
			delete(flagged, id) // an ended executor's backoff ends with it
		}
	}
	if lifted {
		c.notify() // the lifted executors' cores are free for tasks again
	}
}

func usesDevice(d dispatch.Device, exec string) bool {
	for _, u := range d.Users {
		if u.Exec == exec {
			return true
		}
	}
	return false
}

// running lists the backend's live executors, sorted by id. Takes b.mu.
func (b *mesosBackend) running() []ownExec {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []ownExec
	for id, t := range b.tasks {
		if !t.released && !taskstate.IsTerminal(t.state) {
			out = append(out, ownExec{id: id, agent: t.agent, launched: t.launched})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
