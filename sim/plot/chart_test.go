package plot

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

func render(t *testing.T, c *Chart) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(b.Bytes()))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, b.String())
		}
	}
	return b.String()
}

func TestChartIsWellFormedAndDeterministic(t *testing.T) {
	tests := []struct {
		name  string
		chart Chart
		lines int
	}{
		{"empty", Chart{Title: "nothing"}, 0},
		{"escaped text", Chart{Title: `a <b> & "c"`, Lines: []Line{{Name: "x<y", X: []float64{0, 1}, Y: []float64{1, 2}}}}, 1},
		{"NaN and Inf skipped", Chart{Lines: []Line{{Name: "n", X: []float64{0, 1, 2}, Y: []float64{1, math.NaN(), math.Inf(1)}}}}, 1},
		{"step, fixed range, dashed", Chart{Step: true, YMin: 0, YMax: 1, Lines: []Line{{Name: "a", X: []float64{0, 5}, Y: []float64{0.5, 2}, Dashed: true}, {Name: "b", X: []float64{1}, Y: []float64{-1}}}}, 2},
		{"long line thinned", Chart{Lines: []Line{{Name: "long", X: seq(20000), Y: seq(20000)}}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := render(t, &tt.chart)
			if n := strings.Count(s, "<polyline"); n != tt.lines {
				t.Errorf("%d polylines, want %d", n, tt.lines)
			}
			if s != render(t, &tt.chart) {
				t.Error("same chart, different bytes")
			}
			if strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
				t.Error("NaN or Inf in the SVG")
			}
		})
	}
}

func seq(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	return v
}

func TestTicksAreRound(t *testing.T) {
	for _, tt := range []struct{ lo, hi float64 }{{0, 1}, {0, 5837}, {-3, 7}, {0, 0.003}, {100, 100.5}} {
		ts := ticks(tt.lo, tt.hi, 6)
		if len(ts) < 2 || len(ts) > 13 {
			t.Errorf("[%v,%v]: %v", tt.lo, tt.hi, ts)
		}
	}
	if num(25000) != "25k" || num(0.5) != "0.5" || num(3e6) != "3M" {
		t.Errorf("labels: %s %s %s", num(25000), num(0.5), num(3e6))
	}
}
