package rollup

// BenchmarkSketchP75Error (make bench-rum; BENCHMARKS.md keeps its figures): the 75th
// percentile of the sketches against the exact one over many keys; reports the largest and the
// mean relative error in percent.

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func BenchmarkSketchP75Error(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 7))
	var worst, sum float64
	n := 0
	for range b.N {
		for _, dist := range []func() float64{
			func() float64 { return math.Exp(7.6 + 0.5*rng.NormFloat64()) }, // lcp-like, ms
			func() float64 { return math.Exp(4.8 + 0.7*rng.NormFloat64()) }, // inp-like
			func() float64 { return rng.Float64() * 0.3 },                   // cls
			func() float64 { return float64(20000 + rng.IntN(80000)) },      // bytes
		} {
			for _, size := range []int{10, 100, 1000, 10000} {
				var s Sketch
				vals := make([]float64, size)
				for i := range vals {
					vals[i] = dist()
					s.Add(vals[i])
				}
				slices.Sort(vals)
				exact := vals[int(0.75*float64(size-1))]
				got, _ := s.Quantile(0.75)
				rel := math.Abs(got-exact) / exact
				worst = max(worst, rel)
				sum += rel
				n++
			}
		}
	}
	b.ReportMetric(worst*100, "max_err_%")
	b.ReportMetric(sum/float64(n)*100, "mean_err_%")
}
