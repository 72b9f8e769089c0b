package lighthouse

import "slices"

// MedianRun picks, among several runs of one page, the run Lighthouse itself would report: it
// follows computeMedianRun in lighthouse/core/lib/median-run.js (13.5) exactly. The median FCP
// and the median TTI are taken over the runs (the mean of the two middle values for an even
// count), and the run closest to both (squared Euclidean distance) wins; a tie goes to the lower
// TTI, then to the earlier run (JavaScript's sort is stable).
//
// Like Lighthouse's filterToValidRuns, which its callers apply first, runs without a usable FCP
// or TTI are left out of the medians and can never be chosen. "Usable" mirrors Lighthouse's
// `numericValue || NaN`: a missing, non-finite or zero value does not count. MedianRun returns
// the chosen run's index in reports, or -1 if no run is usable.
func MedianRun(reports []*Report) int {
	var valid []int
	for i, r := range reports {
		if r != nil && usable(r.FCP) && usable(r.TTI) {
			valid = append(valid, i)
		}
	}
	if len(valid) == 0 {
		return -1
	}
	fcps := make([]float64, len(valid))
	ttis := make([]float64, len(valid))
	for k, i := range valid {
		fcps[k] = *reports[i].FCP
		ttis[k] = *reports[i].TTI
	}
	medianFCP, medianTTI := median(fcps), median(ttis)

	best := -1
	var bestDistance, bestTTI float64
	for _, i := range valid {
		dFCP := medianFCP - *reports[i].FCP
		dTTI := medianTTI - *reports[i].TTI
		distance := dFCP*dFCP + dTTI*dTTI
		tti := *reports[i].TTI
		// Strictly better only: on a full tie the earlier run stays, as a stable sort keeps it first.
		if best < 0 || distance < bestDistance || (distance == bestDistance && tti < bestTTI) {
			best, bestDistance, bestTTI = i, distance, tti
		}
	}
	return best
}

// usable mirrors median-run.js's getNumericValue, `numericValue || NaN`, followed by
// filterToValidRuns' Number.isFinite: 0, NaN, ±Inf and absent values are not usable.
func usable(v *float64) bool {
	return v != nil && *v != 0 && isFinite(*v)
}

// median is median-run.js's getMedianValue: the middle value, or the mean of the two middle
// values for an even count. values must not be empty; it is sorted in place.
func median(values []float64) float64 {
	// The values are finite, so slices.Sort orders them like JavaScript's (a, b) => a - b.
	slices.Sort(values)
	n := len(values)
	if n%2 == 1 {
		return values[(n-1)/2]
	}
	return (values[n/2-1] + values[n/2]) / 2
}
