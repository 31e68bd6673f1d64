// Package operator is the master's operator documents as JSON: GET /state
// (Mesos-shaped: frameworks, slaves, completed_frameworks) and GET
// /pressure. The master encodes these types and every client decodes them
// (the CLI, the tests, a framework reading its agents' rates), so the
// document is declared once. A client that needs a few fields decodes the
// whole record and reads those.
//
// Field order and omitempty are part of the document: State lists its
// fields in the order of their JSON names, as the master wrote them when
// the document was a map.
package operator
