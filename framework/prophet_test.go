package framework

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api"
	"github.com/allot-sched/allot/framework/eventlog"
	"github.com/allot-sched/allot/framework/placement"
	"github.com/allot-sched/allot/profile"
)

// timelineServer answers GET /timelines with agents of 100 MB/s disk,
// each running another framework's executor that reads busy[agent] MB/s
// for a minute from now.
func timelineServer(t *testing.T, busy map[string]float64) string {
	now := time.Now()
	doc := api.Timelines{AtUnixNano: now.UnixNano(), Modelled: true}
	for _, id := range []string{"A", "B", "C"} {
		tl, _ := profile.NewTimeline(100, 100)
		var execs []api.TimelineExecutor
		if d := busy[id]; d > 0 {
			p := profile.Profile{Stages: []profile.Stage{{Start: 0, End: time.Minute, DiskBW: d}}}
			_ = tl.Add("x", now, &p)
			execs = append(execs, api.NewTimelineExecutor("other", now, &p))
		}
		doc.Agents = append(doc.Agents, api.NewAgentTimeline(id, tl, execs, now))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != api.TimelinesPath {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// The Mesos backend's prophet placement puts first the offers of the
// agents whose timelines fit its profile best, and keeps the offers' order
// when it needs as many agents as it holds or the master cannot answer.
func TestProphetOrder(t *testing.T) {
	// the executors read 40 MB/s for a minute: A (60 busy) fits exactly,
	// B is idle (fragmentation), C (90 busy) over-allocates
	busy := map[string]float64{"A": 60, "C": 90}
	prof := &profile.Profile{Stages: []profile.Stage{{Start: 0, End: time.Minute, DiskBW: 40}}}
	for _, c := range []struct {
		name   string
		master string // "" = a server with busy's timelines
		want   int
		own    string // an agent already running one of ours
		order  string
	}{
		{"one executor: the exact fit", "", 1, "", "A,C,B"},
		{"two executors: fit then idle", "", 2, "", "A,B,C"},
		{"our own executor on A counts: B first", "", 1, "A", "B,C,A"},
		{"as many agents as executors: offer order", "", 3, "", "C,B,A"},
		{"master down: offer order", "127.0.0.1:1", 1, "", "C,B,A"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr := c.master
			if addr == "" {
				addr = timelineServer(t, busy)
			}
			ctx := &Context{cfg: Config{Master: addr, Logf: t.Logf}, clock: RealClock{}, http: http.DefaultClient, elog: eventlog.NewWriter(io.Discard)}
			b := &mesosBackend{c: ctx, tasks: map[string]*mesosExec{}, want: c.want, profile: prof, placement: placement.Prophet}
			if c.own != "" {
				b.want++
				b.tasks["exec-0"] = &mesosExec{agent: c.own, state: mesos.TASK_RUNNING, launched: time.Now()}
			}
			var offers []mesos.Offer
			for _, id := range []string{"C", "B", "A"} {
				offers = append(offers, mesos.Offer{ID: mesos.OfferID{Value: "o-" + id}, AgentID: mesos.AgentID{Value: id}})
			}
			var got []string
			for _, o := range b.prophetOrder(offers) {
				got = append(got, o.AgentID.Value)
			}
			if s := strings.Join(got, ","); s != c.order {
				t.Errorf("offers ordered %s, want %s", s, c.order)
			}
		})
	}
}
