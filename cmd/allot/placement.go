package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/framework/sched"
	"github.com/allot-sched/allot/resources"
)

// Placement feedback in the CLI: `allot explain FRAMEWORK` and what
// allot run says while no offer comes.

// fetchUnplaced asks the masters why framework fw was offered nothing.
func fetchUnplaced(hc *http.Client, masters, fw string) (operator.Unplaced, error) {
	var u operator.Unplaced
	b, err := call(hc, masters, http.MethodGet, "/explain?"+url.Values{"framework_id": {fw}, "format": {"json"}}.Encode(), nil)
	if err != nil {
		return u, err
	}
	if err := json.Unmarshal(b, &u); err != nil {
		return u, fmt.Errorf("the master's /explain answer: %v", err)
	}
	return u, nil
}

// explainFramework prints why framework fw was offered nothing lately.
func explainFramework(c *cliFlags, fw string, stdout io.Writer) error {
	u, err := fetchUnplaced(c.client(), c.masters, fw)
	if err != nil {
		return err
	}
	if c.json {
		return printJSON(stdout, u)
	}
	reason := u.Reason
	if reason == "" {
		reason = "placeable"
	}
	fmt.Fprintf(stdout, "framework %s: %s\n  reason: %s", fw, humanize(u.Message), reason)
	if u.Dimension != "" {
		fmt.Fprintf(stdout, " (%s)", u.Dimension)
	}
	cycles := "cycles"
	if u.IdleCycles == 1 {
		cycles = "cycle"
	}
	fmt.Fprintf(stdout, "; last offer %d allocation %s ago\n", u.IdleCycles, cycles)
	return nil
}

// runPlacementPoll is how often allot run asks why its framework has no
// offer while its task waits; runPlacementQuiet is how many allocation
// cycles without an offer it lets pass before it says so (the first
// cycles after subscribing are ordinary waiting).
const (
	runPlacementPoll  = time.Second
	runPlacementQuiet = 3
)

// watchPlacement asks the masters every so often, until ctx ends or launched says the
// task was launched, why framework fw gets no offer: it prints a reason
// that is new once the framework went runPlacementQuiet cycles without
// one, and sends an error on the returned channel when no agent could
// ever run the task (seen twice in a row, so that one reading taken while
// agents re-register does not end the run).
func watchPlacement(ctx context.Context, hc *http.Client, masters, fw string, every time.Duration, launched func() bool, stderr io.Writer) <-chan error {
	never := make(chan error, 1)
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		var said string
		seenNever := 0
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if launched() {
				return
			}
			u, err := fetchUnplaced(hc, masters, fw)
			if err != nil {
				continue // the event stream says when the masters are gone
			}
			if u.Never {
				if seenNever++; seenNever >= 2 {
					never <- fmt.Errorf("no agent can run this task: %s", u.Message)
					return
				}
				continue
			}
			seenNever = 0
			if u.IdleCycles >= runPlacementQuiet && u.Reason != "" && u.Reason != "waiting" && u.Message != said {
				said = u.Message
				fmt.Fprintf(stderr, "allot run: no offer yet: %s\n", humanize(strings.TrimSpace(u.Message)))
			}
		}
	}()
	return never
}

// runDemand declares allot run's task to the masters (REQUEST), so that
// the allocator can say why no offer fits it. No task count: the
// framework suppresses offers once its one task runs.
func runDemand(need resources.Resources) *sched.Demand {
	return &sched.Demand{Resources: []mesos.Resource{
		sched.Scalar("cpus", need.Scalar("cpus").Units()),
		sched.Scalar("mem", need.Scalar("mem").Units()),
	}}
}

// launched reports whether the task was launched (and not lost since).
func (p *runPlanner) isLaunched() bool {
	_, _, _, l := p.current()
	return l
}
