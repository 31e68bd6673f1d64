package integration

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/allot-sched/allot/internal/testcluster"
)

// A framework whose declared task is larger than every agent is offered
// nothing, and the UI says why: its framework page names the resource and
// the largest agent, and the overview lists it among the frameworks left
// waiting. A framework that asked for no offers (suppressed) is not listed
// there, though its own page says so.
func TestWebUIShowsWhyNothingIsPlaced(t *testing.T) {
	ctx := browser(t)
	c := newCluster(t, 1)
	quiet := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "ui-quiet"})
	if err := quiet.call(calls.Suppress()); err != nil {
		t.Fatal(err)
	}
	big := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "ui-too-big"})
	if err := big.call(calls.Request(mesos.Request{Resources: []mesos.Resource{scalar("cpus", 16), scalar("mem", 32)}})); err != nil {
		t.Fatal(err)
	}
	id := big.ID()
	testcluster.WaitFor(t, 30*time.Second, "/state to say why ui-too-big and ui-quiet are offered nothing", func() bool {
		why := map[string]string{}
		for _, f := range c.state().Frameworks {
			if f.Unplaced != nil {
				why[f.ID] = f.Unplaced.Reason
			}
		}
		return why[id] == "too_big" && why[quiet.ID()] == "suppressed"
	})
	base := "http://" + c.MasterAddr
	run(t, ctx, "the framework page says why", chromedp.Navigate(base+"/framework?id="+id),
		waitIn("#framework-unplaced", "Offered nothing: needs cpus 16"), waitIn("#framework-unplaced", "too big (cpus)"),
		waitJS(`document.querySelector("#framework-unplaced").classList.contains("never")`))
	shot(t, ctx, "framework-unplaced")
	run(t, ctx, "the overview lists it", chromedp.Navigate(base+"/"), waitIn("#unplaced", "ui-too-big"), waitIn("#unplaced", "needs cpus 16"),
		waitJS(`!document.querySelector("#unplaced").innerText.includes("ui-quiet")`))
	shot(t, ctx, "overview-unplaced")
	run(t, ctx, "the suppressed framework's page says so", chromedp.Navigate(base+"/framework?id="+quiet.ID()),
		waitIn("#framework-unplaced", "suppressed: it asked for no offers"))
}
