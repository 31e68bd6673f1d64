package hashrand

import (
	"fmt"
	"math"
	"testing"
)

func TestNormalIsAPureFunction(t *testing.T) {
	for _, c := range []struct {
		seed uint64
		key  string
	}{{1, "job-1"}, {1, "job-2"}, {2, "job-1"}, {0, ""}} {
		if a, b := Normal(c.seed, c.key), Normal(c.seed, c.key); a != b {
			t.Errorf("Normal(%d, %q) gave %v then %v", c.seed, c.key, a, b)
		}
	}
	if Normal(1, "job-1") == Normal(2, "job-1") || Normal(1, "job-1") == Normal(1, "job-2") {
		t.Error("different seeds or keys gave the same draw")
	}
}

// Over many keys the draws have mean 0 and standard deviation 1 within
// four standard errors.
func TestNormalMoments(t *testing.T) {
	const n = 20000
	var sum, sq float64
	for i := 0; i < n; i++ {
		z := Normal(7, fmt.Sprint("key-", i))
		sum += z
		sq += z * z
	}
	mean := sum / n
	sd := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean) > 4/math.Sqrt(n) {
		t.Errorf("mean %v, want 0 +- %v", mean, 4/math.Sqrt(n))
	}
	if math.Abs(sd-1) > 4/math.Sqrt(2*n) {
		t.Errorf("standard deviation %v, want 1 +- %v", sd, 4/math.Sqrt(2*n))
	}
}
