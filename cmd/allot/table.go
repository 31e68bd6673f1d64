package main

import (
	"flag"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/allot-sched/allot/api/operator"
	"github.com/allot-sched/allot/internal/shortid"
)

// table is how the list verbs print: columns aligned by a tabwriter two
// spaces apart, a header row of capitals, then one row a line. Cells are
// text; a verb formats its numbers with fmtQty and fmtStamp first.
type table struct{ tw *tabwriter.Writer }

// newTable starts a table on w with the header cells given (none: a
// key-value listing with no header).
func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

// row adds one line of cells.
func (t *table) row(cells ...string) {
	io.WriteString(t.tw, strings.Join(cells, "\t")+"\n")
}

// flush writes the aligned table out.
func (t *table) flush() error { return t.tw.Flush() }

// The kinds of id the CLI prints in its short form and resolves.
const (
	kindTask      = "task"
	kindFramework = "framework"
	kindAgent     = "agent"
)

// knownIDs are the ids of one kind in a /state, the set within which a
// short form is unique: every task, live or finished; every framework,
// live or completed; every agent. The UI (ui/static/app.js learnIDs) uses
// the same sets, so both show an id the same way.
func knownIDs(st *operator.State, kind string) []string {
	var ids []string
	switch kind {
	case kindTask:
		for _, t := range allTasks(st) {
			ids = append(ids, t.ID)
		}
	case kindFramework:
		ids = frameworkIDs(st, true)
	case kindAgent:
		for _, a := range st.Slaves {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// resolve fetches the leader's /state and finds the id of kind that s
// names (resolveID).
func (c *cliFlags) resolve(kind, s string) (string, error) {
	st, err := c.state()
	if err != nil {
		return "", err
	}
	return resolveID(kind, s, knownIDs(st, kind))
}

// idPrinter writes ids in tables: each in its short form among the ids
// of its kind (internal/shortid, what the UI shows and every verb takes),
// or whole where the operator asked for --full-ids.
type idPrinter struct {
	full  bool
	known map[string][]string
}

// addFullIDsFlag gives a table verb its --full-ids flag.
func addFullIDsFlag(fs *flag.FlagSet, full *bool) {
	fs.BoolVar(full, "full-ids", false, "print whole ids instead of their short forms (the shortest end of an id that no other id has; every verb takes either)")
}

// statePrinter prints the ids of a /state.
func statePrinter(st *operator.State, full bool) idPrinter {
	p := idPrinter{full: full, known: map[string][]string{}}
	for _, k := range []string{kindTask, kindFramework, kindAgent} {
		p.known[k] = knownIDs(st, k)
	}
	return p
}

// id is id's form in a table ("-" for none).
func (p idPrinter) id(kind, id string) string {
	if id == "" {
		return "-"
	}
	if p.full {
		return id
	}
	return shortid.Short(id, p.known[kind])
}
