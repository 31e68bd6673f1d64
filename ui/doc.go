// Package ui is allot's web UI, embedded in the binary so that
// `go run ./cmd/allot dev` serves it with nothing else installed.
//
// Stack, chosen deliberately: server-rendered Go templates (html/template)
// give every page its shell, navigation and title, and two small
// hand-written scripts (static/app.js, the data, the lists and the event
// stream; static/pages.js, the agent, framework and search pages, sorting
// and filtering, charts and the buttons that act; no framework, no build
// step) fill the page from the master's own JSON endpoints and keep it
// current from the operator event stream. Charts are inline SVG drawn from
// the master's samples of the last hour (so a reload keeps them). Ids are
// shown in the short form the CLI takes (internal/shortid's rule, mirrored
// in app.js). Dark mode and a phone's width are CSS alone.
// A Node build step would be something `go run` cannot do, and the pages
// are tables and one chart: a vendored library would be more code to keep
// than it saves.
//
// The package knows nothing of the master: it serves pages and assets, and
// the script reads data under DataPrefix, which the master maps onto its
// operator endpoints (and, on a follower, proxies to the leader, so every
// master shows the leader's data).
package ui
