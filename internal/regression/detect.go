// Package regression finds lasting changes of level in openvitals' daily series (a page's lab
// metrics, its user-experience p75 values, a multistep test's timings), tells them from noise,
// and names what changed in the page.
package regression

import (
	"math"
	"slices"

	"github.com/aclements/go-moremath/stats"
)

// Day is one day of a series: the values measured that day (every Lighthouse run of the audit,
// every run of a test, or the one p75 of a daily dataset).
type Day struct {
	Day    string // yyyymmdd
	Values []float64
	// Count is how many measurements the day's value summarises (real users' page views),
	// 0 when unknown: a p75 of few views is noisier, and Daily weighs it less.
	Count int
}

// Threshold is the least change of a metric that counts: both the relative change (of the
// level before) and the absolute change (in the metric's unit) must reach it.
type Threshold struct {
	Relative float64 `json:"relative"`
	Absolute float64 `json:"absolute"`
}

// least is the smallest change that counts from level before.
func (t Threshold) least(before float64) float64 {
	return max(t.Relative*math.Abs(before), t.Absolute)
}

// Level is a series' values over some days: their median and spread (the interquartile range).
type Level struct {
	Median float64 `json:"median"`
	Spread float64 `json:"spread"`
}

// Change is a lasting change of level.
type Change struct {
	// LastGood is the last day at the old level, FirstBad the first at the new one.
	LastGood, FirstBad string
	Before, After      Level
	// Delta is After.Median - Before.Median; Percent is Delta as a percentage of Before.Median
	// (0 when Before.Median is 0).
	Delta, Percent float64
	// P is the Mann-Whitney U test's two-sided p-value of the values before against after.
	P float64
	// Worse tells whether the change goes the bad way for the metric.
	Worse bool
}

// Detector decides whether a series changed level. Its zero value is not usable: take
// NewDetector's.
type Detector struct {
	// Alpha is the p-value a change must be below.
	Alpha float64
	// Window is how many days before a candidate change are its "before" (fewer when the series
	// is shorter or changed within them).
	Window int
	// MinBeforeDays and MinBeforeValues are the least "before" a decision needs.
	MinBeforeDays, MinBeforeValues int
	// PersistDays is how many days, at least, a change must have lasted: a single day, however
	// far off, never counts. MinAfterValues is the least number of values after it (a series of
	// one value a day, like a p75, waits for more days).
	PersistDays, MinAfterValues int
	// MaxAgeDays bounds how far back a change may have started to be found now.
	MaxAgeDays int
	// DayAlpha is the one-sided p-value each day since a change must reach on its own (when it
	// has values enough to; see eachDayOff).
	DayAlpha float64
	// NearFraction is the part of the least change by which every day since a change, even
	// its run nearest the old level, must be off that level.
	NearFraction float64
	// FarOut is how many interquartile ranges beyond its quartiles a value is far out of its
	// sample, and set aside (Tukey's fences).
	FarOut float64
}

// NewDetector returns the detector openvitals uses (see BENCHMARKS.md, "Regression detection",
// for how these values were chosen against labelled series).
func NewDetector() Detector {
	return Detector{Alpha: 0.001, Window: 14, MinBeforeDays: 3, MinBeforeValues: 6, PersistDays: 3, MinAfterValues: 6, MaxAgeDays: 10, DayAlpha: 0.05,
		NearFraction: 0.4, FarOut: 1.5}
}

// Detect looks for a change of level at the end of series (oldest first, one entry per day,
// days without values left out), after index from (the first day of the current level: where
// the last recorded change or recovery began; 0 for none). It reports the earliest change that
// started within MaxAgeDays and is significant, at least as large as t, and lasting, and true;
// higherIsWorse says which way is bad for the metric. Each day's worst run, of three or more,
// is set aside first (withoutWorstRun).
func (d Detector) Detect(series []Day, from int, t Threshold, higherIsWorse bool) (Change, bool) {
	series = withoutWorstRun(series, higherIsWorse)
	n := len(series)
	// The earliest day that passes is the change's first: a day before it fails "lasting".
	for c := max(from+d.MinBeforeDays, n-d.MaxAgeDays, 1); c <= n-d.PersistDays; c++ {
		before, after := values(series[max(from, c-d.Window):c]), values(series[c:])
		if len(before) < d.MinBeforeValues || len(after) < d.MinAfterValues {
			continue
		}
		// Runs far out of their own sample (Tukey's fences) are set aside: a run slowed by
		// another process on the machine is such a run, and a test of ranks would take it for
		// the level. Mobile TBT measured 100 ms in most runs and 446 ms in one.
		before, after = farOutRemoved(before, d.FarOut), farOutRemoved(after, d.FarOut)
		b, a := median(before), median(after)
		delta := a - b
		least := t.least(b)
		if delta == 0 {
			continue
		}
		// Every day since the change must sit off the old level, on the change's side, by half
		// the least change, and its run nearest the old level by NearFraction of it: a change
		// moves every run, while a slow run (another process on the machine) is one run, and a
		// day with two such runs has a median off but a nearest run where it was. A day back at
		// the old level means the change did not last; of three days or more, one may have its
		// nearest run back (see maxLapses). The first day must also be nearer the new level
		// than the old: a day a few percent high just before a large step is the old level's,
		// not the change's first (whose cause would compare two loads of the old version).
		lasting, lapses := true, 0
		for i, day := range series[c:] {
			off := shifted(day.Values, b, delta)
			if median(off) < least/2 || i == 0 && median(off) < math.Abs(delta)/2 {
				lasting = false
				break
			}
			if slices.Min(off) < least*d.NearFraction {
				lapses++
			}
		}
		if lapses > maxLapses(len(series)-c) {
			lasting = false
		}
		if !lasting {
			continue
		}
		p := mannWhitneyP(before, after)
		if p >= d.Alpha {
			continue
		}
		// As large as the least change: not ruled out by the shift's 95 % confidence interval
		// (a true change of exactly the least size measures below it half of the time).
		if shiftBound(before, after, delta) < least {
			continue
		}
		// Nor may one day carry it: each day since, on its own, must sit off the old level
		// (its values against the values before, one-sided, at DayAlpha).
		if !d.eachDayOff(before, series[c:], delta) {
			continue
		}
		ch := Change{LastGood: series[c-1].Day, FirstBad: series[c].Day,
			Before: level(before), After: level(after), Delta: delta, P: p, Worse: (delta > 0) == higherIsWorse}
		if b != 0 {
			ch.Percent = 100 * delta / math.Abs(b)
		}
		return ch, true
	}
	return Change{}, false
}

// Recovered tells whether a series, after the change ch (found earlier), came back: every day
// of its last PersistDays, and every day after the first of them, nearer the level before the
// change than the level after it. It returns the index of the first day back.
func (d Detector) Recovered(series []Day, ch Change) (int, bool) {
	series = withoutWorstRun(series, (ch.Delta > 0) == ch.Worse)
	mid := (ch.Before.Median + ch.After.Median) / 2
	back := func(day Day) bool { return (median(day.Values)-mid)*sign(ch.Delta) < 0 }
	n := len(series)
	first := n
	for first > 0 && series[first-1].Day > ch.FirstBad && back(series[first-1]) {
		first--
	}
	if n-first < d.PersistDays || len(values(series[first:])) < d.MinAfterValues/2 {
		return 0, false
	}
	return first, true
}

// shiftBound is the far end, in the direction of delta, of the 95 % confidence interval of
// the shift from before to after (the Hodges-Lehmann interval of the pairwise differences that
// goes with the Mann-Whitney test, by its normal approximation), as a size.
func shiftBound(before, after []float64, delta float64) float64 {
	diffs := make([]float64, 0, len(before)*len(after))
	for _, a := range after {
		for _, b := range before {
			diffs = append(diffs, a-b)
		}
	}
	slices.Sort(diffs)
	n1, n2 := float64(len(before)), float64(len(after))
	k := int(math.Floor(n1*n2/2 - 1.96*math.Sqrt(n1*n2*(n1+n2+1)/12)))
	k = min(max(k, 0), len(diffs)-1)
	if delta > 0 {
		return diffs[len(diffs)-1-k]
	}
	return -diffs[k]
}

// farOutRemoved returns v without the values beyond its fences: more than k interquartile
// ranges below the first quartile or above the third.
func farOutRemoved(v []float64, k float64) []float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	q1, q3 := quantile(s, 0.25), quantile(s, 0.75)
	lo, hi := q1-k*(q3-q1), q3+k*(q3-q1)
	out := v[:0:0]
	for _, x := range v {
		if x >= lo && x <= hi {
			out = append(out, x)
		}
	}
	return out
}

// shifted is how far each value is from level in the direction of delta.
func shifted(values []float64, level, delta float64) []float64 {
	out := make([]float64, len(values))
	for i, v := range values {
		out[i] = (v - level) * sign(delta)
	}
	return out
}

// eachDayOff tells whether the days of after, each on its own, differ from before in the
// direction of delta (a one-sided Mann-Whitney test at DayAlpha), all but maxLapses of them.
// Days of one value (a daily p75) are let through: the pooled test decides for them.
func (d Detector) eachDayOff(before []float64, after []Day, delta float64) bool {
	alt := stats.LocationGreater
	if delta < 0 {
		alt = stats.LocationLess
	}
	lapses := 0
	for _, day := range after {
		if len(day.Values) < 2 {
			continue // a daily p75: its days' medians were checked; the pooled test decides
		}
		r, err := stats.MannWhitneyUTest(day.Values, before, alt)
		if err != nil || r.P >= d.DayAlpha {
			lapses++
		}
	}
	return lapses <= maxLapses(len(after))
}

// maxLapses is how many days of a change lasting days may fail a day's own checks (its run
// nearest the old level, its own test) while their medians stay off: none of two, one of
// three or more.
func maxLapses(days int) int {
	if days >= 3 {
		return 1
	}
	return 0
}

// mannWhitneyP is the two-sided p-value of the Mann-Whitney U test of x against y; samples
// that are all equal differ in nothing (p = 1).
func mannWhitneyP(x, y []float64) float64 {
	r, err := stats.MannWhitneyUTest(x, y, stats.LocationDiffers)
	if err != nil {
		return 1
	}
	return r.P
}

func values(days []Day) []float64 {
	var v []float64
	for _, d := range days {
		v = append(v, d.Values...)
	}
	return v
}

func level(v []float64) Level {
	s := slices.Clone(v)
	slices.Sort(s)
	return Level{Median: quantile(s, 0.5), Spread: quantile(s, 0.75) - quantile(s, 0.25)}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return quantile(s, 0.5)
}

// quantile of sorted values, interpolated between the nearest ranks.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (pos-float64(lo))*(sorted[hi]-sorted[lo])
}

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}

// Known is what is recorded of a series: its open regression (nil if none) and the first day
// of its current level ("" for the series' start).
type Known struct {
	Open  *Change
	Since string
}

// Outcome is what a day's evaluation of a series found: the open regression's recovery (the
// first day back, or ""), and a new change of level (nil if none).
type Outcome struct {
	Recovered string
	Change    *Change
}

// Evaluate decides, after a day's values, what changed in a series given what is recorded of
// it: first whether the open regression recovered, then whether the level changed since the
// current level began.
func (d Detector) Evaluate(series []Day, k Known, t Threshold, higherIsWorse bool) Outcome {
	var out Outcome
	from, _ := slices.BinarySearchFunc(series, k.Since, func(day Day, since string) int {
		if day.Day < since {
			return -1
		}
		if day.Day > since {
			return 1
		}
		return 0
	})
	if k.Open != nil {
		if first, ok := d.Recovered(series, *k.Open); ok {
			out.Recovered = series[first].Day
			from = max(from, first)
		}
	}
	if ch, ok := d.Detect(series, from, t, higherIsWorse); ok {
		out.Change = &ch
	}
	return out
}

// withoutWorstRun sets aside the worst run of each day of three runs or more: interference
// (another process on the machine, a slow network moment) makes a run slower, never faster, so
// a day's best runs are its truest. Measured: mobile TBT 100 ms in most runs, 446 ms in one.
func withoutWorstRun(series []Day, higherIsWorse bool) []Day {
	out := make([]Day, len(series))
	for i, d := range series {
		out[i] = d
		if len(d.Values) < 3 {
			continue
		}
		worst := 0
		for j, v := range d.Values {
			if (higherIsWorse && v > d.Values[worst]) || (!higherIsWorse && v < d.Values[worst]) {
				worst = j
			}
		}
		out[i].Values = slices.Delete(slices.Clone(d.Values), worst, worst+1)
	}
	return out
}
