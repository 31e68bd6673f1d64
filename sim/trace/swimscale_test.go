package trace

import "testing"

func TestSWIMScale(t *testing.T) {
	cases := []struct {
		scale                 float64
		in, shuffle, out      float64
		wantIn, wantSh, wantO float64
	}{
		{0, 1e9, 5e8, 1e3, 1e9, 5e8, 1e3},
		{0.5, 1e9, 5e8, 1e6, 5e8, 2.5e8, 5e5},
		// the replay tool's floors: one 64 MiB block of input, 1 KiB of
		// shuffle and output
		{0.01, 1e9, 0, 1e4, swimBlock, 1024, 1024},
	}
	for _, c := range cases {
		in, sh, o := swimScale(TraceOptions{SWIMScale: c.scale}, c.in, c.shuffle, c.out)
		if in != c.wantIn || sh != c.wantSh || o != c.wantO {
			t.Errorf("scale %v of (%v, %v, %v) = (%v, %v, %v), want (%v, %v, %v)", c.scale, c.in, c.shuffle, c.out, in, sh, o, c.wantIn, c.wantSh, c.wantO)
		}
	}
	if got := SWIMReplayScale("fb-2009", 8); got != 8.0/600 {
		t.Errorf("SWIMReplayScale(FB-2009, 8) = %v, want 8/600", got)
	}
}
