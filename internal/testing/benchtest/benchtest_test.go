package benchtest_test

import (
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/testing/benchtest"
)

// TestPercentileMS: the nearest rank of unsorted samples, the smallest for a tiny p, the
// largest for 1, and 0 without samples.
func TestPercentileMS(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	for _, c := range []struct {
		samples []time.Duration
		p, want float64
	}{
		{ms(40, 10, 30, 20), 0.5, 20},
		{ms(40, 10, 30, 20), 0.51, 30},
		{ms(40, 10, 30, 20), 0.01, 10},
		{ms(40, 10, 30, 20), 1, 40},
		{ms(7), 0.99, 7},
		{nil, 0.5, 0},
	} {
		if got := benchtest.PercentileMS(c.samples, c.p); got != c.want {
			t.Errorf("PercentileMS(%v, %v) = %v, want %v", c.samples, c.p, got, c.want)
		}
	}
}
