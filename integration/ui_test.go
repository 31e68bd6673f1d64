package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// chromium finds the headless browser the UI tests drive (Debian's
// chromium package, which .ci/run installs), or says why the test cannot
// run: a skip that names what is missing, never a silent pass.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("ALLOT_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("CANNOT RUN: no headless Chromium on this machine (apt-get install chromium, or set ALLOT_CHROMIUM); the web UI is untested here")
	return ""
}

// browser starts a headless Chromium for the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.WindowSize(1280, 860), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	// The first Run starts the browser on ctx itself: a deadline context
	// derived from it later only bounds each step.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("starting headless Chromium: %v", err)
	}
	return ctx
}

// run runs browser actions with a deadline.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(c, actions...); err != nil {
		var html string
		dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
		defer dcancel()
		chromedp.Run(dctx, chromedp.OuterHTML("main", &html, chromedp.ByQuery))
		t.Fatalf("browser: %s: %v\nthe page's main element:\n%s", what, err, html)
	}
}

// waitText waits until the element sel's text contains want.
func waitText(sel, want string) chromedp.Action {
	return chromedp.Poll(`(document.querySelector(`+jsString(sel)+`)||{}).innerText?.includes(`+jsString(want)+`)`, nil,
		chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))
}

func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// screenshot saves the page as NAME.png in the test's artifact directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	run(t, ctx, "screenshot "+name, chromedp.FullScreenshot(&png, 100)) // quality 100 makes a PNG
	path := filepath.Join(t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// The web UI against a real master, agents and framework in headless
// Chromium: every page shows its data, the task page's log view shows a
// line the task prints after the page was opened, and the policy switch
// on the allocator page changes the sorter in /state.
func TestWebUI(t *testing.T) {
	ctx := browser(t)
	c := newCluster(t, 2)
	fw := subscribe(t, c.MasterAddr, mesos.FrameworkInfo{Name: "ui-fw"})
	o := fw.takeOffer(t, "")
	marker := t.TempDir() + "/go"
	script := "echo before the page; while [ ! -e " + marker + " ]; do sleep 0.1; done; echo after the page opened; sleep 60"
	if err := fw.call(launch(o, cmdTask("ui-task-1", o, script, 0.5, 64))); err != nil {
		t.Fatal(err)
	}
	fw.waitState(t, "ui-task-1", mesos.TASK_RUNNING)
	base := "http://" + c.MasterAddr
	agentSuffix := o.GetAgentID().Value[len(o.GetAgentID().Value)-3:]

	pages := []struct{ path, sel, want, shot string }{
		{"/", "#policy", "drf · rrr · oblivious", "overview"},
		{"/", "#peers", "leader", ""},
		{"/", "#resources", "cpus", ""},
		{"/agents", "#agents", agentSuffix, "agents"},
		{"/frameworks", "#frameworks", "ui-fw", "frameworks"},
		{"/tasks", "#tasks", "ui-task-1", "tasks"},
	}
	for _, p := range pages {
		run(t, ctx, p.path, chromedp.Navigate(base+p.path), waitText(p.sel, p.want), waitText("#live", "live"))
		if p.shot != "" {
			screenshot(t, ctx, p.shot)
		}
	}

	run(t, ctx, "task page", chromedp.Navigate(base+"/task?id=ui-task-1&framework="+fw.ID()),
		waitText("#task-info", "TASK_RUNNING"), waitText("#log", "before the page"))
	if err := exec.Command("touch", marker).Run(); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "the line printed after the page opened", waitText("#log", "after the page opened"))
	screenshot(t, ctx, "task")

	run(t, ctx, "allocator page", chromedp.Navigate(base+"/allocator"), waitText("#legend", "ui-fw"), chromedp.WaitVisible("#sorter-form[data-synced]", chromedp.ByQuery))
	run(t, ctx, "policy switch", chromedp.SetValue("#sorter", "fifo", chromedp.ByID), chromedp.SetValue("#mode", "characterized", chromedp.ByID),
		chromedp.Click("#sorter-apply", chromedp.ByID), waitText("#sorter-result", "In force"))
	if st := c.state(); st.Allocator.Sorter != "fifo" {
		t.Errorf("after the switch on the allocator page /state says %v", st.Allocator)
	}
	// "Why?" shows the allocator's own words for the pair chosen on the page
	// (every Explain answer names the framework or the agent; its wording
	// depends on the moment, a decline filter running out, so it is not
	// compared whole).
	var fwSel, agentSel string
	run(t, ctx, "why: the chosen pair", chromedp.Value("#explain-fw", &fwSel, chromedp.ByID), chromedp.Value("#explain-agent", &agentSel, chromedp.ByID))
	if fwSel != fw.ID() || agentSel == "" {
		t.Fatalf("why: the page offers framework %q (want %q) and agent %q", fwSel, fw.ID(), agentSel)
	}
	run(t, ctx, "why", chromedp.Click("#explain-go", chromedp.ByID),
		chromedp.Poll(`(() => { const t = document.querySelector('#explain-result').innerText; return t.includes(`+jsString(fwSel)+`) || t.includes(`+jsString(agentSel)+`); })()`, nil,
			chromedp.WithPollingInterval(200*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
	screenshot(t, ctx, "allocator")

	run(t, ctx, "unknown page", chromedp.Navigate(base+"/nowhere"), waitText("main", "There is no page"))
}
