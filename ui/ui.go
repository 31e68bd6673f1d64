package ui

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
)

// DataPrefix is where the pages' script fetches its data: DataPrefix +
// "/state", "/roles", "/explain", "/files/read", "/files/browse",
// "/files/download", "/api/v1/allot/sorter", "/api/v1/allot/samples",
// "/api/v1/allot/raft" and "/api/v1" (the operator event stream). The
// server that mounts Handler must serve these.
const DataPrefix = "/ui/data"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// page is one page of the UI.
type page struct {
	Path, Name, Title string
	// Nav says whether the page is in the navigation bar.
	Nav bool
}

var pages = []page{
	{"/", "overview", "Cluster", true},
	{"/agents", "agents", "Agents", true},
	{"/frameworks", "frameworks", "Frameworks", true},
	{"/roles", "roles", "Roles", true},
	{"/tasks", "tasks", "Tasks", true},
	{"/allocator", "allocator", "Allocator", true},
	{"/task", "task", "Task", false},
	{"/agent", "agent", "Agent", false},
	{"/framework", "framework", "Framework", false},
	{"/search", "search", "Search", false},
}

// view is what the templates render.
type view struct {
	Page    page
	Pages   []page
	Version string
	Data    string
	// Sorters are the criteria the allocator page offers to switch to.
	Sorters []string
}

// Handler serves the UI's pages and its static assets (under /ui/static/).
// version is shown in the footer; sorters are the criteria the allocator
// page offers (the server's own list, so the UI never offers a name the
// master would refuse).
func Handler(version string, sorters []string) http.Handler {
	tmpl := template.Must(template.ParseFS(templateFS, "templates/*.html"))
	static, _ := fs.Sub(staticFS, "static")
	mux := http.NewServeMux()
	mux.Handle("/ui/static/", http.StripPrefix("/ui/static/", http.FileServer(http.FS(static))))
	for _, p := range pages {
		p := p
		mux.HandleFunc(p.Path, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != p.Path {
				if to, ok := idPagePath(r.URL.EscapedPath()); ok {
					http.Redirect(w, r, to, http.StatusFound)
					return
				}
				notFound(w, tmpl, version, r.URL.Path)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			tmpl.ExecuteTemplate(w, "layout.html", view{Page: p, Pages: pages, Version: version, Data: DataPrefix, Sorters: sorters})
		})
	}
	return mux
}

// idPagePath maps /agent/ID, /framework/ID and /task/ID, the form a
// person guesses (and Mesos's UI uses), to the page the UI links to,
// /agent?id=ID. path is escaped: an id may hold an escaped "/".
func idPagePath(path string) (string, bool) {
	for _, kind := range []string{"agent", "framework", "task"} {
		esc, ok := strings.CutPrefix(path, "/"+kind+"/")
		if !ok || esc == "" || strings.Contains(esc, "/") {
			continue
		}
		if id, err := url.PathUnescape(esc); err == nil {
			return "/" + kind + "?" + url.Values{"id": {id}}.Encode(), true
		}
	}
	return "", false
}

// notFound answers an unknown path with a page that leads somewhere.
func notFound(w http.ResponseWriter, tmpl *template.Template, version, path string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	p := page{Path: path, Name: "notfound", Title: "Not found"}
	tmpl.ExecuteTemplate(w, "layout.html", view{Page: p, Pages: pages, Version: version, Data: DataPrefix})
}

// IsPage says whether path is one of the UI's pages or assets, for a server
// that mounts the UI beside other handlers at "/".
func IsPage(path string) bool {
	if strings.HasPrefix(path, "/ui/static/") {
		return true
	}
	for _, p := range pages {
		if p.Path == path {
			return true
		}
	}
	return false
}
