package lighthouse

import (
	"math"
	"testing"
)

// run makes a report with the two values computeMedianRun reads; NaN stands for "absent".
func run(fcp, tti float64) *Report {
	r := &Report{}
	if !math.IsNaN(fcp) {
		r.FCP = &fcp
	}
	if !math.IsNaN(tti) {
		r.TTI = &tti
	}
	return r
}

// The expectations were checked against Lighthouse 13.5's own computeMedianRun (after
// filterToValidRuns) with the same values.
func TestMedianRun(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		runs []*Report
		want int
	}{
		{"none", nil, -1},
		{"one", []*Report{run(1000, 3000)}, 0},
		{"odd count, plain median", []*Report{run(1200, 4200), run(1000, 4000), run(1400, 4400)}, 0},
		// Medians are FCP 1100 and TTI 4000, which no run has: distances 1 010 000, 1 000 000
		// and 10 000, so the third run, although neither its FCP nor its TTI is the median of
		// only one metric, is closest to both.
		{"closest to both medians", []*Report{run(1000, 5000), run(1100, 3000), run(1200, 4000)}, 2},
		// Even count: medians are the means of the two middle values (FCP 1500, TTI 4000); both
		// runs are equally far and have the same TTI, so the first wins.
		{"even count, full tie keeps first", []*Report{run(1000, 4000), run(2000, 4000)}, 0},
		// Equally far (medians 1500 and 3500), ties broken by the lower TTI.
		{"tie broken by lower TTI", []*Report{run(1000, 4000), run(2000, 3000)}, 1},
		{"four runs", []*Report{run(900, 2000), run(1000, 2600), run(1100, 2400), run(3000, 9000)}, 2},
		// Runs Lighthouse's filterToValidRuns drops: absent FCP or TTI, and 0 (median-run.js
		// reads values as `numericValue || NaN`). They take no part in the medians either:
		// over the two valid runs the medians are FCP 1500 and TTI 3500, a tie that the lower
		// TTI (index 4) wins.
		{"invalid runs skipped", []*Report{run(nan, 3000), run(1000, 4000), run(1000, 0), nil, run(2000, 3000), run(math.Inf(1), 3000)}, 4},
		{"all invalid", []*Report{run(nan, nan), run(0, 1000), nil}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MedianRun(tt.runs); got != tt.want {
				t.Errorf("MedianRun = %d, want %d", got, tt.want)
			}
		})
	}
}
