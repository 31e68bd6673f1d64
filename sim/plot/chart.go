package plot

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
)

// Line is one named series of points. X must not decrease.
type Line struct {
	Name string
	X, Y []float64
	// Dashed draws the line dashed (for a second resource of the same run).
	Dashed bool
	// Color overrides the palette (any SVG colour); empty picks by order.
	Color string
}

// Chart is a line chart.
type Chart struct {
	Title, XLabel, YLabel string
	Lines                 []Line
	// YMin and YMax fix the y range when YMax > YMin; otherwise it fits
	// the data (from zero when all values are non-negative).
	YMin, YMax float64
	// Step draws each line as a step function (value held until the next x).
	Step bool
	// Width and Height in pixels; 0 means 860 x 440.
	Width, Height int
}

// Palette is the colour cycle (colour-blind-safe, Okabe-Ito).
var Palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"}

// maxPoints bounds the points drawn per line; longer lines are thinned
// evenly (files stay small and open quickly).
const maxPoints = 4000

// Margins around the plot area, in pixels; the right one holds the legend.
const left, right, top, bottom = 70.0, 190.0, 40.0, 50.0

// WriteSVG writes the chart as an SVG document.
func (c *Chart) WriteSVG(w io.Writer) error {
	f := c.frame()
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica,Arial,sans-serif" font-size="12">`+"\n", f.W, f.H, f.W, f.H)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="white"/>`+"\n", f.W, f.H)
	fmt.Fprintf(b, `<text x="%g" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", left, esc(c.Title))
	f.writeAxes(b, c.XLabel, c.YLabel)
	for i, l := range c.Lines {
		f.writeLine(b, i, l, c.Step)
	}
	fmt.Fprintln(b, "</svg>")
	return b.Flush()
}

// frame is the chart's geometry: its size, the plot area inside the
// margins, the data ranges it spans and the ticks along each axis.
type frame struct {
	W, H                   int
	pw, ph                 float64
	xmin, xmax, ymin, ymax float64
	xt, yt                 []float64
}

// frame sizes the chart and fits its ranges to the finite points of
// every line, unless the chart fixes the y range.
func (c *Chart) frame() frame {
	f := frame{W: c.Width, H: c.Height}
	if f.W <= 0 {
		f.W = 860
	}
	if f.H <= 0 {
		f.H = 440
	}
	f.pw, f.ph = float64(f.W)-left-right, float64(f.H)-top-bottom
	f.xmin, f.xmax, f.ymin, f.ymax = c.dataRange()
	if c.YMax > c.YMin {
		f.ymin, f.ymax = c.YMin, c.YMax
	}
	if f.xmax <= f.xmin {
		f.xmax = f.xmin + 1
	}
	if f.ymax <= f.ymin {
		f.ymax = f.ymin + 1
	}
	f.xt = ticks(f.xmin, f.xmax, 8)
	f.yt = ticks(f.ymin, f.ymax, 6)
	if c.YMax <= c.YMin {
		f.ymax = math.Max(f.ymax, f.yt[len(f.yt)-1])
	}
	return f
}

// dataRange is the extent of the lines' finite points, widened to take
// in zero when all values are non-negative; [0,1]x[0,1] when there are none.
func (c *Chart) dataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	ymin, ymax = math.Inf(1), math.Inf(-1)
	for _, l := range c.Lines {
		for i := range l.X {
			if i >= len(l.Y) || !finite(l.X[i]) || !finite(l.Y[i]) {
				continue
			}
			xmin, xmax = math.Min(xmin, l.X[i]), math.Max(xmax, l.X[i])
			ymin, ymax = math.Min(ymin, l.Y[i]), math.Max(ymax, l.Y[i])
		}
	}
	if math.IsInf(xmin, 1) {
		xmin, xmax, ymin, ymax = 0, 1, 0, 1
	}
	if ymin >= 0 {
		ymin = 0
	}
	if xmin >= 0 {
		xmin = 0
	}
	return xmin, xmax, ymin, ymax
}

func (f *frame) sx(x float64) float64 { return left + (x-f.xmin)/(f.xmax-f.xmin)*f.pw }
func (f *frame) sy(y float64) float64 { return top + f.ph - (y-f.ymin)/(f.ymax-f.ymin)*f.ph }

// writeAxes draws the grid with its tick labels, the plot border and the
// axis labels.
func (f *frame) writeAxes(b io.Writer, xlabel, ylabel string) {
	for _, t := range f.yt {
		if t < f.ymin || t > f.ymax {
			continue
		}
		y := f.sy(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`+"\n", left, y, left+f.pw, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y+4, num(t))
	}
	for _, t := range f.xt {
		if t < f.xmin || t > f.xmax {
			continue
		}
		x := f.sx(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e4e4e4"/>`+"\n", x, top, x, top+f.ph)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x, top+f.ph+16, num(t))
	}
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#444"/>`+"\n", left, top, f.pw, f.ph)
	fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", left+f.pw/2, f.H-12, esc(xlabel))
	fmt.Fprintf(b, `<text transform="translate(18 %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+f.ph/2, esc(ylabel))
}

// writeLine draws the i-th line and its legend entry.
func (f *frame) writeLine(b io.Writer, i int, l Line, step bool) {
	color := l.Color
	if color == "" {
		color = Palette[i%len(Palette)]
	}
	dash := ""
	if l.Dashed {
		dash = ` stroke-dasharray="6 4"`
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.6"%s points="%s"/>`+"\n", color, dash, f.points(l, step))
	ly := top + 10 + float64(i)*18
	lx := left + f.pw + 14
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", lx, ly, lx+24, ly, color, dash)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", lx+30, ly+4, esc(l.Name))
}

// points is a line's polyline coordinates: finite points only, clamped
// to the y range, thinned to maxPoints (always keeping the last), with a
// corner before each point when drawn as steps.
func (f *frame) points(l Line, step bool) string {
	var pts strings.Builder
	n := min(len(l.X), len(l.Y))
	stride := 1
	if n > maxPoints {
		stride = (n + maxPoints - 1) / maxPoints
	}
	prevY := math.NaN()
	for j := 0; j < n; j += stride {
		if j+stride >= n {
			j = n - 1
		}
		x, y := l.X[j], l.Y[j]
		if !finite(x) || !finite(y) {
			continue
		}
		y = math.Max(f.ymin, math.Min(f.ymax, y))
		if step && !math.IsNaN(prevY) {
			fmt.Fprintf(&pts, "%.1f,%.1f ", f.sx(x), f.sy(prevY))
		}
		fmt.Fprintf(&pts, "%.1f,%.1f ", f.sx(x), f.sy(y))
		prevY = y
	}
	return strings.TrimSpace(pts.String())
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func esc(s string) string { return html.EscapeString(s) }

// ticks returns about n round tick values covering [lo, hi].
func ticks(lo, hi float64, n int) []float64 {
	span := hi - lo
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, f := range []float64{1, 2, 2.5, 5, 10} {
		if f*p >= raw {
			step = f * p
			break
		}
	}
	var out []float64
	for t := math.Ceil(lo/step-1e-9) * step; t <= hi+step*1e-9; t += step {
		out = append(out, math.Round(t/step)*step)
	}
	if len(out) == 0 {
		out = []float64{lo, hi}
	}
	return out
}

// num prints a tick label compactly.
func num(x float64) string {
	if x == 0 {
		return "0"
	}
	a := math.Abs(x)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(x/1e6, 'f', -1, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(x/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(x, 'f', -1, 64)
}
