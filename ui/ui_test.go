package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Every page renders its shell with the navigation and the data prefix the
// script reads; the assets are served; an unknown path is a 404 page that
// leads back.
func TestPages(t *testing.T) {
	srv := httptest.NewServer(Handler("test", []string{"drf", "psdsf"}))
	defer srv.Close()
	tests := []struct {
		path string
		code int
		want []string
	}{
		{"/", 200, []string{`data-page="overview"`, `data-api="/ui/data"`, `id="resources"`, `href="/agents"`, `id="unplaced"`, `/ui/static/placement.js`}},
		{"/agents", 200, []string{`data-page="agents"`, `id="agents"`, `class="current"`}},
		{"/frameworks", 200, []string{`id="frameworks"`}},
		{"/roles", 200, []string{`data-page="roles"`, `id="roles"`}},
		{"/tasks", 200, []string{`id="state-filter"`}},
		{"/task", 200, []string{`id="log"`, `id="history"`}},
		{"/agent", 200, []string{`id="agent-reservations"`, `id="agent-chart"`}},
		{"/framework", 200, []string{`id="framework-filters"`, `id="framework-chart"`, `id="framework-unplaced"`}},
		{"/ui/static/placement.js", 200, []string{"function showUnplaced", "function renderWaiting"}},
		{"/search", 200, []string{`id="search-results"`, `/ui/static/pages.js`}},
		{"/allocator", 200, []string{`id="share-chart"`, `id="sorter-form"`, `id="explain-form"`, `<option>drf</option><option>psdsf</option>`}},
		{"/ui/static/app.js", 200, []string{"subscribe", "RecordIO"}},
		{"/ui/static/style.css", 200, []string{".grid"}},
		{"/nowhere", 404, []string{"There is no page at", "/nowhere"}},
	}
	for _, tc := range tests {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, w := range tc.want {
			if resp.StatusCode != tc.code || !strings.Contains(string(b), w) {
				t.Errorf("GET %s: %d, want %d with %q", tc.path, resp.StatusCode, tc.code, w)
			}
		}
	}
	// /agent/ID and its kin lead to the page the UI links to.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for path, want := range map[string]string{
		"/agent/abc-S1":          "/agent?id=abc-S1",
		"/framework/abc-0001":    "/framework?id=abc-0001",
		"/task/allot-run-1%2F2":  "/task?id=allot-run-1%2F2",
		"/task/my%20task":        "/task?id=my+task",
		"/agent/":                "",
		"/agent/abc-S1/sandbox/": "",
	} {
		resp, err := noFollow.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Location"); got != want || (want == "" && resp.StatusCode != 404) {
			t.Errorf("GET %s: %d to %q, want %q (a 404 where none)", path, resp.StatusCode, got, want)
		}
	}
	if !IsPage("/agents") || IsPage("/state") || !IsPage("/ui/static/app.js") {
		t.Error("IsPage misclassifies paths")
	}
}
