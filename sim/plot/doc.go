// Package plot draws the simulator's figures as self-contained SVG files:
// line charts with axes, ticks, a legend and a title, that any browser
// opens. It is deliberately small (the standard library only, no fonts to
// embed, no scripts) and deterministic: the same data give the same bytes.
package plot
