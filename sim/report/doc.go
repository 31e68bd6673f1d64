// Package report writes the simulator's results for people: the
// comparison table, the JSON document `allot sim --json` prints, and with
// --out the CSV series, SVG plots (sim/plot) and an index.html. OutDir is
// the output directory the lab's experiments write their own pages with.
package report
