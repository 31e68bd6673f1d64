package plot

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden SVG files in testdata/")

// goldenCharts cover every branch of the renderer: fitted and fixed
// ranges, negative values, steps, dashes, palette and custom colours,
// non-finite points, thinning and a custom size. Their bytes are pinned
// so that a change to the drawing code cannot change a chart unnoticed.
var goldenCharts = map[string]Chart{
	"empty": {Title: "nothing"},
	"mixed": {
		Title: `Share <per> "framework" & more`, XLabel: "time (s)", YLabel: "dominant share",
		Width: 700, Height: 360,
		Lines: []Line{
			{Name: "fw-a cpu", X: []float64{0, 1.5, 3, 4.5, 6}, Y: []float64{0.1, 0.35, 0.5, 0.42, 0.6}},
			{Name: "fw-a mem", X: []float64{0, 1.5, 3, 4.5, 6}, Y: []float64{0.05, 0.2, 0.3, 0.25, 0.4}, Dashed: true},
			{Name: "fw-b", X: []float64{-2, 0, 2, 4, 8}, Y: []float64{-0.3, 0.2, math.NaN(), 0.9, math.Inf(1)}, Color: "#123456"},
		},
	},
	"step-fixed-range": {
		Title: "steps", Step: true, YMin: 0, YMax: 1,
		Lines: []Line{
			{Name: "a", X: []float64{0, 5, 9}, Y: []float64{0.5, 2, 0.25}, Dashed: true},
			{Name: "b", X: []float64{1, 3}, Y: []float64{-1, 0.75}},
		},
	},
	"large-values-thinned": {
		Title: "big", XLabel: "n", YLabel: "tasks",
		Lines: []Line{{Name: "long", X: seq(9001), Y: scaled(seq(9001), 1500)}},
	},
}

func scaled(v []float64, k float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = x * k
	}
	return out
}

func TestChartMatchesGolden(t *testing.T) {
	for name, c := range goldenCharts {
		t.Run(name, func(t *testing.T) {
			got := render(t, &c)
			path := filepath.Join("testdata", filepath.Base(name)+".svg")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("SVG differs from %s (rerun with -update only if the change is intended)", path)
			}
		})
	}
}
