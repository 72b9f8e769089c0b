// Package compare sets two audits of one page on one device side by side: their metrics with
// the differences and each audit's run-to-run spread, and, where their diagnostics are known,
// what changed in the load (filmstrips on one time axis, requests added, removed, grown or
// slowed, the LCP element and its phases, new layout shifts, long tasks in all and per
// script). Its types carry the JSON names the API answers with. An audit is a day's lab result,
// a test series' test or any other load with its diagnostics: the comparison is over the two
// audits, not over days.
package compare

import (
	"maps"
	"math"
	"slices"

	"github.com/openvitals/openvitals/internal/model"
)

// Audit is one audit as compared: its metrics (the median run's, as model.LabResult.Metrics)
// and, where known, every run's values of some of them (model.LabResult.Samples).
type Audit struct {
	Metrics map[string]float64
	Samples map[string][]float64
	// Diagnostics explain the audit's load (its median run's); nil when none were kept.
	Diagnostics *model.Diagnostics
}

// Metric is one metric of both audits. A value either audit did not measure is nil, and so
// are the differences then. Its JSON is the API's answer.
type Metric struct {
	Name string `json:"name"`
	// Unit and HigherIsWorse describe a watched metric; the caller that knows them sets
	// them (this package knows no metric).
	Unit          string   `json:"unit,omitempty"`
	HigherIsWorse *bool    `json:"higherIsWorse,omitempty"`
	Base          *float64 `json:"base"`
	Target        *float64 `json:"target"`
	Delta         *float64 `json:"change"`        // Target-Base
	Percent       *float64 `json:"changePercent"` // Delta as a percentage of Base (nil when Base is 0)
	// BaseSpread and TargetSpread are the interquartile ranges of each audit's runs (nil
	// without the runs' values, or with fewer than MinRunsForSpread).
	BaseSpread   *float64 `json:"baseSpread"`
	TargetSpread *float64 `json:"targetSpread"`
	// BeyondSpread tells that the difference is larger than both audits' spreads: a change
	// rather than the runs' noise. False when a spread is unknown.
	BeyondSpread bool `json:"beyondSpread"`
}

// MinRunsForSpread is the fewest runs whose values have a spread worth showing.
const MinRunsForSpread = 3

// Comparison is two audits side by side.
type Comparison struct {
	Metrics []Metric
	// Loads is what changed in the load, when both audits have their diagnostics (else nil).
	Loads *Loads
}

// Of compares base (the earlier or reference audit) with target. first names the metrics
// listed first, in that order (e.g. the watched ones); the others follow by name.
func Of(base, target Audit, first []string) Comparison {
	c := Comparison{Metrics: Metrics(base, target, first)}
	if base.Diagnostics != nil && target.Diagnostics != nil {
		l := CompareLoads(base.Diagnostics, target.Diagnostics, DefaultThresholds)
		c.Loads = &l
	}
	return c
}

// Metrics compares every metric either audit has; first names those listed first.
func Metrics(base, target Audit, first []string) []Metric {
	names := map[string]bool{}
	for n := range base.Metrics {
		names[n] = true
	}
	for n := range target.Metrics {
		names[n] = true
	}
	var order []string
	for _, n := range first {
		if names[n] {
			order = append(order, n)
			delete(names, n)
		}
	}
	order = append(order, slices.Sorted(maps.Keys(names))...)
	out := make([]Metric, 0, len(order))
	for _, n := range order {
		m := Metric{Name: n, Base: valueOf(base.Metrics, n), Target: valueOf(target.Metrics, n),
			BaseSpread: spread(base.Samples[n]), TargetSpread: spread(target.Samples[n])}
		if m.Base != nil && m.Target != nil {
			d := *m.Target - *m.Base
			m.Delta = &d
			if *m.Base != 0 {
				p := d / math.Abs(*m.Base) * 100
				m.Percent = &p
			}
			m.BeyondSpread = m.BaseSpread != nil && m.TargetSpread != nil && d != 0 &&
				math.Abs(d) > *m.BaseSpread && math.Abs(d) > *m.TargetSpread
		}
		out = append(out, m)
	}
	return out
}

func valueOf(m map[string]float64, name string) *float64 {
	if v, ok := m[name]; ok {
		return &v
	}
	return nil
}

// spread is the interquartile range of runs' values (quantiles interpolated between the
// nearest ranks, as regression detection's levels).
func spread(values []float64) *float64 {
	if len(values) < MinRunsForSpread {
		return nil
	}
	s := slices.Clone(values)
	slices.Sort(s)
	iqr := quantile(s, 0.75) - quantile(s, 0.25)
	return &iqr
}

func quantile(sorted []float64, q float64) float64 {
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (pos-float64(lo))*(sorted[hi]-sorted[lo])
}
