package hashrand

import "math"

// Normal is a standard normal deviate that is a pure function of
// (seed, key): FNV-1a of the key, mixed with the seed by SplitMix64, gives
// two uniforms in (0, 1), and Box-Muller turns them into a normal.
func Normal(seed uint64, key string) float64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	x := seed ^ h
	next := func() float64 {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		return (float64(z>>11) + 0.5) / (1 << 53) // in (0, 1)
	}
	u1, u2 := next(), next()
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}
