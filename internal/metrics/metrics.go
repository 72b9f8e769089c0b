// Package metrics aggregates what is measured of monitored pages: lab results, the
// user-experience dataset's records and search analytics. It turns stored results into
// values by their interface names, averages "latest" over the last 3 days present, merges a
// page's series by day, assesses the core web vitals, and reads what the page lists need.
package metrics

import (
	"math"
	"slices"

	"github.com/openvitals/openvitals/internal/model"
)

const (
	// LatestDays is how many of the most recent days present "latest" averages.
	LatestDays = 3
	// WindowDays is how many days, today included, the page list and latest values read.
	WindowDays = 30
)

// Devices are the devices pages are audited on.
var Devices = []string{"desktop", "mobile"}

// UXVitals are the vitals the user-experience dataset gives, by their interface names. fid is
// not among them: the dataset no longer has First Input Delay, so ux_fid is never invented.
var UXVitals = []string{"lcp", "inp", "cls", "fcp", "ttfb"}

// Good thresholds of the core web vitals at the 75th percentile.
const (
	goodLCP = 2500 // ms
	goodINP = 200  // ms
	goodCLS = 0.1
)

// Values are measured values by their interface names (lcp, ux_lcp, CTR, opportunities...),
// rounded as the interface shows them. A field that was not measured is absent.
type Values map[string]float64

// Get is a field's value; false when it was not measured.
func (v Values) Get(field string) (float64, bool) {
	x, ok := v[field]
	return x, ok
}

// Round gives a field's value as the interface shows it: cls and ux_cls to four decimals, CTR
// (percent) to two, everything else a whole number. Budgets are judged on rounded values, so
// that what a budget reports matches what the client sees.
func Round(field string, v float64) float64 {
	switch field {
	case "cls", "ux_cls":
		return math.Round(v*10000) / 10000
	case "CTR":
		return math.Round(v*100) / 100
	}
	return math.Round(v)
}

// MethodField is the lab field that keeps a day's measurement method: 1 for applied
// throttling, 0 for simulated. It is not a metric: no list shows it as one.
const MethodField = "applied_throttling"

// Method is the measurement method the values were measured by (their MethodField):
// model.MethodApplied or model.MethodSimulated, "" when they do not say.
func (v Values) Method() string { return methodOf(v.Get(MethodField)) }

// methodOf is the measurement method a MethodField value names; "" without one (values, or a
// summary, from before results kept their method).
func methodOf(v float64, ok bool) string {
	switch {
	case !ok:
		return ""
	case v == 1:
		return model.MethodApplied
	}
	return model.MethodSimulated
}

// LabValues are a lab result's measured values, rounded, with its number of opportunities
// and its method (MethodField).
func LabValues(r model.LabResult) Values {
	out := make(Values, len(r.Metrics)+2)
	for k, v := range r.Metrics {
		out[k] = Round(k, v)
	}
	out["opportunities"] = float64(len(r.Opportunities))
	out[MethodField] = 0
	if model.MethodOr(r.Method, "") == model.MethodApplied {
		out[MethodField] = 1
	}
	return out
}

// UXValues are a user-experience record's 75th percentiles as ux_* fields, rounded.
func UXValues(r model.UXResult) Values {
	out := make(Values, len(r.Vitals))
	for name, v := range r.Vitals {
		if slices.Contains(UXVitals, name) {
			out["ux_"+name] = Round("ux_"+name, v.P75)
		}
	}
	return out
}

// SearchValues are a page's search analytics as the interface names them. Without impressions
// there is neither a click-through rate nor a position.
func SearchValues(r model.SearchResult) Values {
	out := Values{"impressions": math.Round(r.Impressions), "clicks": math.Round(r.Clicks)}
	if r.Impressions > 0 {
		out["CTR"] = Round("CTR", r.Clicks/r.Impressions*100)
		out["position"] = math.Round(r.Position)
	}
	return out
}

// Latest averages the most recent LatestDays of days (oldest first) measured by the newest
// day's method (MethodField, when the days have it), field by field over the days that have
// the field, rounded: a Section's Latest, one rule for both. It is nil when there is no day.
func Latest(days []Values) Values {
	dated := make([]Dated, len(days))
	for i, v := range days {
		dated[i] = Dated{Values: v}
	}
	return NewSection(dated).Latest()
}

// LatestLab is the latest of lab results (oldest first); nil without a result.
func LatestLab(rs []model.LabResult) Values { return Latest(each(rs, LabValues)) }

// Assess is the core web vitals assessment of the ux_* values that value gives: LCP, INP and CLS all good at the
// 75th percentile, LCP and CLS alone when INP has no data. Without LCP or CLS there is no
// assessment (ok is false).
func Assess(value func(field string) (float64, bool)) (passed, ok bool) {
	lcp, hasLCP := value("ux_lcp")
	cls, hasCLS := value("ux_cls")
	if !hasLCP || !hasCLS {
		return false, false
	}
	passed = lcp <= goodLCP && cls <= goodCLS
	if inp, hasINP := value("ux_inp"); hasINP {
		passed = passed && inp <= goodINP
	}
	return passed, true
}

// Series is one page on one device with its results over a range of days, oldest first: lab
// results, user-experience records and search analytics (which are per page, so shared by its
// devices). UX and Search are empty unless the read asked for them.
type Series struct {
	Page   model.Page
	Device string
	Lab    []model.LabResult
	UX     []model.UXResult
	Search []model.SearchResult
}

// Latest are the series' latest values: the lab fields, the ux_* fields and the search fields
// each averaged over their own last 3 days present. It is nil when the series is empty.
func (s Series) Latest() Values { return s.Listing().Latest() }

// VitalSummary is one vital averaged over the latest records: its 75th percentile (rounded as
// its ux_* field) and the shares of good, needs-improvement and poor experiences, in percent
// with two decimals.
type VitalSummary struct {
	P75, Good, NeedsImprovement, Poor float64
}

// UXSummary is a page's latest user-experience data on one device.
type UXSummary struct {
	// Vitals are the vitals the latest records have data for, by name (lcp, inp, cls...).
	Vitals map[string]VitalSummary
	// Passed is the assessment of the averaged percentiles; nil without LCP or CLS.
	Passed *bool
}

// LatestUX averages the latest LatestDays user-experience records (oldest first) vital by
// vital, over the records that have the vital, and assesses the result. It is nil without a
// record.
func LatestUX(rs []model.UXResult) *UXSummary {
	if len(rs) == 0 {
		return nil
	}
	rs = rs[max(0, len(rs)-LatestDays):]
	out := &UXSummary{Vitals: map[string]VitalSummary{}}
	vals := Values{}
	for _, name := range UXVitals {
		var sum model.Vital
		n := 0.0
		for _, r := range rs {
			if v, ok := r.Vitals[name]; ok {
				sum.P75 += Round("ux_"+name, v.P75)
				sum.Good += v.Good
				sum.NeedsImprovement += v.NeedsImprovement
				sum.Poor += v.Poor
				n++
			}
		}
		if n == 0 {
			continue
		}
		field := "ux_" + name
		vals[field] = Round(field, sum.P75/n)
		out.Vitals[name] = VitalSummary{P75: vals[field], Good: percent(sum.Good / n),
			NeedsImprovement: percent(sum.NeedsImprovement / n), Poor: percent(sum.Poor / n)}
	}
	if passed, ok := Assess(vals.Get); ok {
		out.Passed = &passed
	}
	return out
}

// percent rounds a share in percent to two decimals.
func percent(v float64) float64 { return math.Round(v*100) / 100 }

func each[T any](rs []T, values func(T) Values) []Values {
	out := make([]Values, len(rs))
	for i, r := range rs {
		out[i] = values(r)
	}
	return out
}
