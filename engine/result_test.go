package engine_test

import (
	"math"
	"testing"

	"github.com/tunecon/tunecon/engine"
)

// TestSpread: the sample standard deviation (n-1), its share of the mean,
// and no spread for fewer than two figures or a mean of 0.
func TestSpread(t *testing.T) {
	for _, c := range []struct {
		xs              []float64
		mean, stdev, cv float64
	}{
		{nil, 0, 0, 0},
		{[]float64{5}, 5, 0, 0},
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, math.Sqrt(32.0 / 7), math.Sqrt(32.0/7) / 5},
		{[]float64{-1, 1}, 0, math.Sqrt(2), 0},
	} {
		mean, stdev, cv := engine.Spread(c.xs)
		if math.Abs(mean-c.mean) > 1e-9 || math.Abs(stdev-c.stdev) > 1e-9 || math.Abs(cv-c.cv) > 1e-9 {
			t.Errorf("Spread(%v) = %v, %v, %v; want %v, %v, %v", c.xs, mean, stdev, cv, c.mean, c.stdev, c.cv)
		}
	}
	rep := engine.Summarize([]*engine.Result{{Score: 90}, {Score: 110}})
	if rep.Mean != 100 || math.Abs(rep.CV-math.Sqrt(200)/100) > 1e-9 {
		t.Errorf("Summarize: mean %v, CV %v", rep.Mean, rep.CV)
	}
}
