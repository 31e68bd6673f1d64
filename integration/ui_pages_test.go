package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/allot-sched/allot/internal/shortid"
)

// waitJS waits until the JavaScript expression is true. Unlike
// chromedp.Poll it survives the page navigating meanwhile (a followed link,
// a search that opens its one match), when an evaluation fails for want of
// a context: it tries again until the step's deadline.
func waitJS(expr string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		for {
			var ok bool
			if err := chromedp.Evaluate(`!!(() => { try { return `+expr+`; } catch (e) { return false; } })()`, &ok).Do(ctx); err == nil && ok {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("waiting for %s: %w", expr, ctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
	})
}

// waitIn waits until the element sel's text contains want, across
// navigations (waitJS).
func waitIn(sel, want string) chromedp.Action {
	return waitJS(`(document.querySelector(` + jsString(sel) + `)||{}).innerText?.includes(` + jsString(want) + `)`)
}

// shot saves a screenshot as the test's artifact and, when ALLOT_UI_SHOTS
// names a directory, there too (for a person to look at).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	screenshot(t, ctx, name)
	if dir := os.Getenv("ALLOT_UI_SHOTS"); dir != "" {
		png, err := os.ReadFile(filepath.Join(t.ArtifactDir(), name+".png"))
		if err == nil {
			os.MkdirAll(dir, 0o755)
			err = os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644)
		}
		if err != nil {
			t.Logf("copying screenshot %s: %v", name, err)
		}
	}
}

// The UI past the lists, in headless Chromium against a real cluster:
// ids shown in the CLI's short form and linked to agent, framework and
// task pages; search by short id and by name; sorting and filtering a
// table; browsing into a sandbox's subdirectories; charts from the
// master's samples after a reload; dark mode; a 420 px wide screen.
func TestWebUIPages(t *testing.T) {
	ctx := browser(t)
	c := newCluster(t, 2)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "ui-pages-framework-with-a-rather-long-name"})
	o := fw.takeOffer(t, "")
	nest := "mkdir -p sub/deeper && echo hello > sub/deeper/note.txt; echo started; sleep 120"
	if err := fw.call(launch(o, cmdTask("uipg-beta", o, nest, 0.5, 64), cmdTask("uipg-alpha", o, "sleep 120", 0.5, 64))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "uipg-beta", mesos.TASK_RUNNING)
	fw.waitState(t, "uipg-alpha", mesos.TASK_RUNNING)
	st := c.state()
	var agents []string
	for _, a := range st.Slaves {
		agents = append(agents, a.ID)
	}
	var fws []string
	for _, f := range append(st.Frameworks, st.CompletedFrameworks...) {
		fws = append(fws, f.ID)
	}
	agent := o.GetAgentID().Value
	short := shortid.Short(agent, agents)
	fwShort := shortid.Short(fw.ID(), fws)
	base := "http://" + c.MasterAddr

	uiLinks(t, ctx, base, agent, short, fw.ID(), fwShort)
	uiSearch(t, ctx, base, agent, short, fw.ID())
	uiSortFilter(t, ctx, base)
	uiSandbox(t, ctx, base, fw.ID())
	uiDarkNarrow(t, ctx, base, agent)
	uiKillTeardown(t, ctx, base, fw, c)
}

// uiKillTeardown: the task page's Kill and the framework page's Tear down
// ask first (Cancel does nothing), then act.
func uiKillTeardown(t *testing.T, ctx context.Context, base string, fw *sched, c *cluster) {
	run(t, ctx, "kill asks", chromedp.Navigate(base+"/task?id=uipg-alpha&framework="+fw.ID()), chromedp.WaitVisible("#actions-go", chromedp.ByID),
		chromedp.Click("#actions-go", chromedp.ByID), waitIn("#actions", "Kill task uipg-alpha?"))
	shot(t, ctx, "kill-confirm")
	run(t, ctx, "cancel", chromedp.Click("#actions-no", chromedp.ByID), chromedp.WaitVisible("#actions-go", chromedp.ByID))
	if s := fw.states("uipg-alpha"); s[len(s)-1] != mesos.TASK_RUNNING {
		t.Fatalf("after Cancel the task's states are %v", s)
	}
	run(t, ctx, "kill", chromedp.Click("#actions-go", chromedp.ByID), chromedp.WaitVisible("#actions-yes", chromedp.ByID),
		chromedp.Click("#actions-yes", chromedp.ByID), waitIn("#actions-result", "sent (202)"))
	fw.waitState(t, "uipg-alpha", mesos.TASK_KILLED)
	run(t, ctx, "the kill shows", waitIn("#task-info", "TASK_KILLED"))
	// After a reload the page shows the master's history, not only what
	// it saw itself: the task ran, then was killed, and when it ended.
	run(t, ctx, "the master's history", chromedp.Reload(), waitIn("#history", "running"), waitIn("#history", "killed"),
		waitIn("#task-info", "Ended"))
	run(t, ctx, "teardown", chromedp.Navigate(base+"/framework?id="+fw.ID()), chromedp.WaitVisible("#actions-go", chromedp.ByID),
		chromedp.Click("#actions-go", chromedp.ByID), waitIn("#actions", "Tear down ui-pages-framework"),
		chromedp.Click("#actions-yes", chromedp.ByID), waitIn("#actions-result", "sent (200)"), waitIn("#framework-info", "completed"))
	shot(t, ctx, "framework-torn-down")
	for _, f := range c.state().Frameworks {
		if f.ID == fw.ID() {
			t.Errorf("framework %s still subscribed after Tear down", f.ID)
		}
	}
}

// uiLinks: the agents and tasks tables show the CLI's short form of each
// id, as a link to its page; the agent and framework pages show what
// they hold, and their charts are there after a reload.
func uiLinks(t *testing.T, ctx context.Context, base, agent, short, fw, fwShort string) {
	link := func(table, href, text string) string {
		return `[...document.querySelectorAll('#` + table + ` a.id-link')].some((a) => a.getAttribute('href') === ` + jsString(href) + ` && a.textContent === ` + jsString(text) + `)`
	}
	agentHref, fwHref := "/agent?id="+agent, "/framework?id="+fw
	run(t, ctx, "agents page: the short id links to the agent's page", chromedp.Navigate(base+"/agents"), waitJS(link("agents", agentHref, short)))
	run(t, ctx, "tasks page: framework and agent links", chromedp.Navigate(base+"/tasks"), waitJS(link("tasks", agentHref, short)), waitJS(link("tasks", fwHref, fwShort)))
	run(t, ctx, "follow the agent link", chromedp.Click(`#tasks a[href="`+agentHref+`"]`, chromedp.ByQuery),
		waitIn("#agent-info", agent), waitIn("#agent-tasks", "uipg-alpha"), waitIn("#agent-resources", "cpus"),
		waitIn("#agent-reservations", "nothing reserved"), waitIn("#title", short))
	run(t, ctx, "the agent's chart from the master's samples", chromedp.Reload(), waitJS(`document.querySelectorAll('#agent-chart polyline').length >= 1`),
		waitIn("#agent-legend", "cpus allocated"))
	shot(t, ctx, "agent")
	run(t, ctx, "follow the framework link", chromedp.Click(`#agent-tasks a[href="`+fwHref+`"]`, chromedp.ByQuery),
		waitIn("#framework-info", "ui-pages-framework"), waitIn("#framework-tasks", "uipg-beta"), waitIn("#framework-info", "Outstanding offers"))
	run(t, ctx, "the framework's chart after a reload", chromedp.Reload(), waitJS(`document.querySelectorAll('#framework-chart polyline').length >= 1`),
		waitIn("#framework-legend", "dominant share"))
	shot(t, ctx, "framework")
	run(t, ctx, "allocator: the chart spans the page, the long name is cut short in the legend", chromedp.Navigate(base+"/allocator"),
		waitIn("#legend", fwShort), waitJS(`document.querySelectorAll('#share-chart polyline').length >= 1`),
		waitJS(`document.querySelector('#share-chart').getBoundingClientRect().width > 0.9 * document.querySelector('main').clientWidth`),
		waitJS(`[...document.querySelectorAll('#legend .name')].every((n) => n.getBoundingClientRect().width <= 260)`))
	shot(t, ctx, "allocator-wide")
}

// uiSearch: a short id opens its page; a name matching one framework
// opens it; a text matching several lists them.
func uiSearch(t *testing.T, ctx context.Context, base, agent, short, fw string) {
	run(t, ctx, "search by short agent id", chromedp.Navigate(base+"/agents"), waitIn("#live", "live"),
		chromedp.SendKeys(`header .search input`, short+"\n", chromedp.ByQuery), waitIn("#agent-info", agent))
	run(t, ctx, "search by framework name", chromedp.Navigate(base+"/search?q=rather-long"), waitIn("#framework-info", fw))
	run(t, ctx, "search matching several", chromedp.Navigate(base+"/search?q=uipg-"), waitIn("#search-results", "uipg-alpha"), waitIn("#search-results", "uipg-beta"))
	shot(t, ctx, "search")
}

// uiSortFilter: a heading sorts its column both ways; the filter box
// keeps the rows that contain its text.
func uiSortFilter(t *testing.T, ctx context.Context, base string) {
	first := `document.querySelector('#tasks tbody tr:not([hidden]) td:nth-child(2)').textContent`
	run(t, ctx, "sort by name", chromedp.Navigate(base+"/tasks"), waitIn("#tasks", "uipg-beta"), waitIn("#tasks", "uipg-alpha"),
		chromedp.Click(`#tasks th:nth-child(2)`, chromedp.ByQuery), waitJS(first+` === 'uipg-alpha'`),
		chromedp.Click(`#tasks th:nth-child(2)`, chromedp.ByQuery), waitJS(first+` === 'uipg-beta'`))
	run(t, ctx, "the sort survives a refresh", chromedp.Evaluate(`refresh()`, nil), waitJS(first+` === 'uipg-beta'`))
	run(t, ctx, "filter", chromedp.SendKeys(`input.table-filter[data-for="tasks"]`, "alpha", chromedp.ByQuery),
		waitJS(`[...document.querySelectorAll('#tasks tbody tr')].filter((r) => !r.hidden).length === 1`), waitJS(first+` === 'uipg-alpha'`),
		waitIn(".filter-note", "1 of 2"))
	shot(t, ctx, "tasks-sorted-filtered")
}

// uiSandbox: a directory in the sandbox opens in place (a download of
// it is the agent's 400), down two levels and back up.
func uiSandbox(t *testing.T, ctx context.Context, base, fw string) {
	run(t, ctx, "sandbox", chromedp.Navigate(base+"/task?id=uipg-beta&framework="+fw), waitIn("#log", "started"),
		waitJS(`!!document.querySelector('#sandbox a.dir[data-path$="/sub"]')`),
		chromedp.Click(`#sandbox a.dir[data-path$="/sub"]`, chromedp.ByQuery), waitIn("#sandbox", "deeper/"), waitIn("#sandbox-path", "sandbox/sub/"),
		chromedp.Click(`#sandbox a.dir[data-path$="/sub/deeper"]`, chromedp.ByQuery), waitIn("#sandbox", "note.txt"), waitIn("#sandbox", "6 bytes"))
	shot(t, ctx, "sandbox")
	var href string
	run(t, ctx, "the file's link", chromedp.AttributeValue(`#sandbox li.is-file a`, "href", &href, nil, chromedp.ByQuery))
	if !strings.Contains(href, "/files/download?") || !strings.Contains(href, "note.txt") {
		t.Errorf("the file links to %q, want a download of note.txt", href)
	}
	run(t, ctx, "back up", chromedp.Click(`#sandbox a.dir`, chromedp.ByQuery), waitIn("#sandbox", "deeper/"))
}

// uiDarkNarrow: with prefers-color-scheme dark the page is dark; at 420
// px wide nothing runs off the screen but inside a table's own box.
func uiDarkNarrow(t *testing.T, ctx context.Context, base, agent string) {
	dark := emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}})
	bgDark := `(() => { const m = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number); return m[0] + m[1] + m[2] < 150; })()`
	run(t, ctx, "dark mode", dark, chromedp.Navigate(base+"/agent?id="+agent), waitIn("#agent-tasks", "uipg-alpha"), waitJS(bgDark))
	shot(t, ctx, "agent-dark")
	run(t, ctx, "dark allocator", chromedp.Navigate(base+"/allocator"), waitJS(`document.querySelectorAll('#share-chart polyline').length >= 1`))
	shot(t, ctx, "allocator-dark")
	light := emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}})
	run(t, ctx, "light again", light)
	narrow := emulation.SetDeviceMetricsOverride(420, 860, 1, true)
	fits := `document.documentElement.scrollWidth <= 420`
	for _, p := range []struct{ path, sel, want, name string }{
		{"/tasks", "#tasks", "uipg-alpha", "narrow-tasks"},
		{"/agents", "#agents", "Drain", "narrow-agents"},
		{"/agent?id=" + agent, "#agent-tasks", "uipg-alpha", "narrow-agent"},
		{"/", "#resources", "cpus", "narrow-overview"},
	} {
		run(t, ctx, "420 px: "+p.path, narrow, chromedp.Navigate(base+p.path), waitIn(p.sel, p.want), waitJS(fits))
		shot(t, ctx, p.name)
	}
	run(t, ctx, "back to the desktop", emulation.ClearDeviceMetricsOverride())
}

// Under ACLs that deny every kill_tasks and teardown_frameworks, the
// Kill and Tear down buttons show the master's 403 naming the ACL, and
// the task and framework stay.
func TestWebUIKillAndTeardownAreACLChecked(t *testing.T) {
	ctx := browser(t)
	acls := filepath.Join(t.TempDir(), "acls.json")
	deny := `{"kill_tasks": [{"principals": {"type": "NONE"}, "framework_principals": {"type": "ANY"}}],` +
		` "teardown_frameworks": [{"principals": {"type": "NONE"}, "framework_principals": {"type": "ANY"}}]}`
	if err := os.WriteFile(acls, []byte(deny), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCluster(t, 1, "--acls", acls)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "ui-acl-fw"})
	o := fw.takeOffer(t, "")
	if err := fw.call(launch(o, cmdTask("acl-task", o, "sleep 120", 0.5, 64))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "acl-task", mesos.TASK_RUNNING)
	base := "http://" + c.MasterAddr
	run(t, ctx, "kill refused", chromedp.Navigate(base+"/task?id=acl-task&framework="+fw.ID()), chromedp.WaitVisible("#actions-go", chromedp.ByID),
		chromedp.Click("#actions-go", chromedp.ByID), chromedp.WaitVisible("#actions-yes", chromedp.ByID), chromedp.Click("#actions-yes", chromedp.ByID),
		waitIn("#actions-result", "refused: 403"), waitIn("#actions-result", "kill_tasks"))
	run(t, ctx, "teardown refused", chromedp.Navigate(base+"/framework?id="+fw.ID()), chromedp.WaitVisible("#actions-go", chromedp.ByID),
		chromedp.Click("#actions-go", chromedp.ByID), chromedp.WaitVisible("#actions-yes", chromedp.ByID), chromedp.Click("#actions-yes", chromedp.ByID),
		waitIn("#actions-result", "refused: 403"), waitIn("#actions-result", "teardown_frameworks"))
	shot(t, ctx, "teardown-refused")
	if s := fw.states("acl-task"); s[len(s)-1] != mesos.TASK_RUNNING {
		t.Errorf("after refused kill and teardown the task's states are %v", s)
	}
	if len(c.state().Frameworks) != 1 {
		t.Errorf("after a refused teardown /state lists %d frameworks, want 1", len(c.state().Frameworks))
	}
}
