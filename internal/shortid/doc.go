// Package shortid is the one short form of allot's ids that the CLI prints
// and accepts and the web UI shows (ui/static/app.js implements the same
// rule, and the UI's browser test checks that the two agree).
//
// Every id the master issues starts with the master's own 36-character id
// ("<master-id>-0001" for a framework, "<master-id>-S1" for an agent), so
// the beginnings of ids are all alike and their ends tell them apart. The
// short form of an id is therefore its shortest suffix, of at least MinLen
// characters, that no other known id ends with: the end of an id, as Nomad
// shows a fixed-length prefix of its random ids. An id of at most 2*MinLen
// characters (a task id a framework chose, "web-1") is its own short form.
//
// Resolve accepts what a person may paste: the whole id, a short form (any
// unique suffix), or a unique prefix (what the CLI took before).
package shortid
