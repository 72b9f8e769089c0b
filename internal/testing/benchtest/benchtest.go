// Package benchtest holds what benchmarks share to report their measurements.
package benchtest

import (
	"math"
	"slices"
	"time"
)

// PercentileMS is the nearest-rank p-th percentile (0 < p <= 1) of samples, in milliseconds;
// 0 without samples.
func PercentileMS(samples []time.Duration, p float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return float64(s[max(i, 0)]) / float64(time.Millisecond)
}
