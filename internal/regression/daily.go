package regression

import (
	"math"
	"slices"
)

// Daily finds changes in a series of one value a day (the user-experience dataset's p75, real
// users' daily p75, any daily figure), where Detector's tests of ranks have one value a day to
// rank. Each day it segments the series' last Span days afresh, by the least penalised cost
// (optimal partitioning, the exact minimum PELT finds; at Span days no pruning is needed):
// each segment is a level, or a straight line when a line's better fit pays for its extra
// parameter (a drift, or a 28-day rolling window's ramp), its cost the weighted squares of its
// residuals over the series' noise, and each new segment costs Penalty times the log of the
// number of days (BIC-like). A change is a segment boundary since the current level began;
// see Evaluate. Its zero value is not usable: take NewDaily's.
type Daily struct {
	// Span is how many days, the newest, are segmented each day.
	Span int
	// MinSegment is the fewest days of a segment: a change is reported once it lasted them.
	MinSegment int
	// MinLine is the fewest days of a segment fitted with a line.
	MinLine int
	// MinBefore is the fewest days of a series before its first change: its first days say
	// too little of where it stands.
	MinBefore int
	// Penalty is the cost of a new segment, in units of the log of the number of days.
	Penalty float64
	// MaxWeight bounds a day's weight (its views against the series' median views) both ways.
	MaxWeight float64
}

// NewDaily returns the daily detector openvitals uses (see BENCHMARKS.md, "One value a day",
// for how these values were chosen).
func NewDaily(source string) Daily {
	d := dailyDefaults
	if p, ok := dailyPenalty[source]; ok {
		d.Penalty = p
	}
	return d
}

var dailyDefaults = Daily{Span: History, MinSegment: 3, MinLine: 6, MinBefore: 7, Penalty: 5, MaxWeight: 50}

// dailyPenalty is the penalty of the web's daily series, whose noise is a level's sampling
// error: lower than for any series (a series of unknown nature, which may wander or be
// seasonal), so that smaller steps are found.
var dailyPenalty = map[string]float64{SourceUX: 3, SourceRUM: 3, SourceUXWeekly: 3}

// Evaluate is the service's decision for one series of source after a day's values: Detector's
// for the series of several runs a day (lab, multistep), Daily's for the series of one value a
// day (ux, rum, and any other). The watcher and cmd/changes call it.
func Evaluate(source string, series []Day, k Known, t Threshold, higherIsWorse bool) Outcome {
	switch source {
	case SourceLab, SourceMultistep:
		return NewDetector().Evaluate(series, k, t, higherIsWorse)
	}
	return NewDaily(source).Evaluate(series, k, t, higherIsWorse)
}

// segment is one piece of a segmentation: days [start, end) of the series, fitted by
// level + slope*(day - start).
type segment struct {
	start, end   int
	level, slope float64
	gain         float64 // cost saved by this segment's start being a change (0 for the first)
}

// at is the segment's fitted value on day i.
func (s segment) at(i int) float64 { return s.level + s.slope*float64(i-s.start) }

// last is the segment's fitted value on its last day.
func (s segment) last() float64 { return s.at(s.end - 1) }

// Evaluate decides, after a day's values, what changed in a daily series given what is recorded
// of it. It segments the last Span days; then
//   - the open regression recovered when the segments since its first bad day end nearer its
//     level before than after: the first day of the earliest of those segments is the first day
//     back;
//   - a change is the earliest boundary at least MinSegment days after the current level began
//     (k.Since, or the recovery) whose segment moved the level, from the previous segment's last
//     fitted value to its own last, by the least change t. A boundary inside a drift (the
//     previous segment slopes the same way and the series did not jump there) continues the
//     change already found, and a drift's end (the level stops moving) is none: a trend and a
//     rolling window's ramp are one change, dated at their first day.
//
// Days carry weights: Count (real users' views) against the series' median count, so that a
// day of few views, a noisier p75, counts less.
func (d Daily) Evaluate(series []Day, k Known, t Threshold, higherIsWorse bool) Outcome {
	var out Outcome
	series = series[max(0, len(series)-d.Span):]
	y, w := d.points(series)
	if len(y) < 2*d.MinSegment {
		return out
	}
	segs, sigma, fit := d.segments(y, w)
	dayOf := func(i int) string { return series[i].Day }
	since := 0
	for since < len(series) && series[since].Day < k.Since {
		since++
	}
	if k.Open != nil {
		if i, ok := d.recoveredAt(segs, y, *k.Open, dayOf); ok {
			out.Recovered = dayOf(i)
			since = max(since, i)
		}
	}
	for j := 1; j < len(segs); j++ {
		s, prev := segs[j], segs[j-1]
		// The level before a change is the current level: a segment that began well before
		// it (a segmentation that no longer splits where the last change did, as a drift's
		// start is told from a line through it) is no level to compare with.
		if s.start < since+d.MinSegment || prev.start < since-d.MinSegment || prev.start == 0 && prev.end < d.MinBefore {
			continue
		}
		before, after := prev.last(), s.last()
		delta := after - before
		if delta == 0 || math.Abs(delta) < t.least(before) {
			continue
		}
		// Inside a drift the same way (the days before slope so, clearly, even when a level
		// fitted them at least as well), with no jump at the boundary beyond the least change,
		// the change goes on.
		line := fit.line(prev.start, prev.end, sigma)
		jump := s.at(s.start) - line.at(s.start)
		if math.Abs(line.gain) >= driftT && (line.slope > 0) == (delta > 0) && math.Abs(jump) < max(t.least(before), 2*sigma) {
			continue
		}
		// From the open regression's old level, its way: that regression, found again where
		// more days place its start, not a new one.
		if o := k.Open; o != nil && (delta > 0) == (o.Delta > 0) && math.Abs(before-o.Before.Median) < math.Abs(o.Delta)/2 {
			continue
		}
		// Lasting: each of the last MinSegment days off the level before by half the change
		// (a line through a few days at the old level and one far off is no change yet).
		if slices.ContainsFunc(y[len(y)-d.MinSegment:], func(v float64) bool { return (v-before)/delta < 0.5 }) {
			continue
		}
		ch := Change{LastGood: dayOf(s.start - 1), FirstBad: dayOf(s.start),
			Before: spreadOf(prev, y), After: spreadOf(s, y), Delta: delta, P: max(math.Exp(-s.gain/2), minP),
			Worse: (delta > 0) == higherIsWorse}
		ch.Before.Median, ch.After.Median = before, after
		if before != 0 {
			ch.Percent = 100 * delta / math.Abs(before)
		}
		out.Change = &ch
		break
	}
	return out
}

// recoveredAt finds where the series came back from ch: the start of the earliest of the last
// segments, all starting after ch's first bad day, whose fitted values end nearer the level
// before ch than after.
func (d Daily) recoveredAt(segs []segment, y []float64, ch Change, dayOf func(int) string) (int, bool) {
	mid := (ch.Before.Median + ch.After.Median) / 2
	first := -1
	for j := len(segs) - 1; j > 0; j-- {
		s := segs[j]
		if s.start < d.MinSegment || dayOf(s.start-d.MinSegment) < ch.FirstBad || (s.last()-mid)*sign(ch.Delta) >= 0 ||
			slices.ContainsFunc(y[len(y)-d.MinSegment:], func(v float64) bool { return (v-mid)*sign(ch.Delta) >= 0 }) {
			break
		}
		first = s.start
	}
	return first, first >= 0
}

// spreadOf is a segment's level and the interquartile range of the values around its fit.
func spreadOf(s segment, y []float64) Level {
	res := make([]float64, 0, s.end-s.start)
	for i := s.start; i < s.end; i++ {
		res = append(res, y[i]-s.at(i))
	}
	slices.Sort(res)
	return Level{Median: s.last(), Spread: quantile(res, 0.75) - quantile(res, 0.25)}
}

// points are a series' values (a day's median, when it has several) and weights (its Count
// against the median Count, within MaxWeight both ways; 1 without counts).
func (d Daily) points(series []Day) (y, w []float64) {
	var counts []float64
	for _, day := range series {
		if day.Count > 0 {
			counts = append(counts, float64(day.Count))
		}
	}
	typical := median(counts)
	for _, day := range series {
		y = append(y, median(day.Values))
		wt := 1.0
		if day.Count > 0 && typical > 0 {
			wt = min(max(float64(day.Count)/typical, 1/d.MaxWeight), d.MaxWeight)
		}
		w = append(w, wt)
	}
	return y, w
}

// dailyNoise is the series' noise, the standard deviation of a day of weight 1, from its day-to-day
// differences (each scaled by its two days' weights): their median absolute deviation, which
// steps, drifts and ramps barely move. A series whose differences are mostly 0 (a rolling
// window's p75, rounded) takes half their mean size instead, and one that never moves a
// millionth of its level.
func dailyNoise(y, w []float64) float64 {
	var z []float64
	for i := 1; i < len(y); i++ {
		z = append(z, (y[i]-y[i-1])/math.Sqrt(1/w[i]+1/w[i-1]))
	}
	m := median(z)
	dev, mean := make([]float64, len(z)), 0.0
	for i, v := range z {
		dev[i] = math.Abs(v - m)
		mean += math.Abs(v) / float64(len(z))
	}
	return max(1.4826*median(dev), mean/2, 1e-6*math.Abs(median(y)), 1e-12)
}

// segments is the least penalised segmentation of y (weights w) into levels and lines, and the
// noise it took: the larger of dailyNoise's and the residuals' of the best fit of one change
// (a series that wanders, or is seasonal, is no level plus independent noise, and its
// day-to-day differences understate how far it strays from any fit; one change is what a
// window of a steady series holds at most, most days).
func (d Daily) segments(y, w []float64) ([]segment, float64, fitter) {
	f := newFitter(y, w, d.MinLine, max(len(y), d.Span))
	n := len(y)
	sigma := dailyNoise(y, w)
	// The one-change fit's segments are levels or lines at BIC's price for that first noise.
	one := math.Inf(1)
	for c := d.MinSegment; c <= n-d.MinSegment; c++ {
		_, a := f.fit(0, c, sigma)
		_, b := f.fit(c, n, sigma)
		one = min(one, (a+b)*sigma*sigma)
	}
	if !math.IsInf(one, 1) {
		sigma = max(sigma, math.Sqrt(one/float64(max(1, n-5))))
	}
	return d.segmentsWith(f, sigma), sigma, f
}

// fitter fits levels and lines to parts of a weighted series, from its prefix sums.
type fitter struct {
	sums    [6][]float64 // of w, wt, wtt, wy, wty, wyy
	minLine int
	logn    float64
}

// newFitter's prices are in logs of span days: a series' first days are tested as often as any,
// and a penalty of their fewer days would let their noise through.
func newFitter(y, w []float64, minLine, span int) fitter {
	n := len(y)
	f := fitter{minLine: minLine, logn: math.Log(float64(span))}
	for k := range f.sums {
		f.sums[k] = make([]float64, n+1)
	}
	for i := range n {
		t := float64(i)
		v := [6]float64{w[i], w[i] * t, w[i] * t * t, w[i] * y[i], w[i] * t * y[i], w[i] * y[i] * y[i]}
		for k := range f.sums {
			f.sums[k][i+1] = f.sums[k][i] + v[k]
		}
	}
	return f
}

// fit fits days [i, j) with a level, or a line when its residuals are smaller by more than the
// log of the number of days in units of sigma squared (BIC's price of a parameter): the segment
// and its cost, the weighted squares of its residuals over sigma squared (and that price).
func (f fitter) fit(i, j int, sigma float64) (segment, float64) {
	var s [6]float64
	for k := range f.sums {
		s[k] = f.sums[k][j] - f.sums[k][i]
	}
	sw, st, stt, sy, sty, syy := s[0], s[1], s[2], s[3], s[4], s[5]
	mean := sy / sw
	seg := segment{start: i, end: j, level: mean}
	cost := math.Max(syy-sy*mean, 0) / (sigma * sigma)
	if j-i >= f.minLine {
		if vt := stt - st*st/sw; vt > 0 {
			slope := (sty - st*sy/sw) / vt
			rss := math.Max(syy-sy*mean-slope*slope*vt, 0)
			if c := rss/(sigma*sigma) + f.logn; c < cost {
				seg.slope, seg.level, cost = slope, mean+slope*(float64(i)-st/sw), c
			}
		}
	}
	return seg, cost
}

// minP is the least p-value a daily change reports: the table stores no number below 1e-130,
// and none so small says more.
const minP = 1e-100

// driftT is how many standard errors a slope must be from 0 to be a drift.
const driftT = 3

// line fits days [i, j) with a line whatever its cost: the segment, its gain the slope's
// distance from 0 in standard errors (0 for fewer than 3 days).
func (f fitter) line(i, j int, sigma float64) segment {
	var s [6]float64
	for k := range f.sums {
		s[k] = f.sums[k][j] - f.sums[k][i]
	}
	sw, st, stt, sy, sty := s[0], s[1], s[2], s[3], s[4]
	seg := segment{start: i, end: j, level: sy / sw}
	if vt := stt - st*st/sw; j-i >= 3 && vt > 0 {
		seg.slope = (sty - st*sy/sw) / vt
		seg.level = sy/sw + seg.slope*(float64(i)-st/sw)
		seg.gain = seg.slope * math.Sqrt(vt) / sigma
	}
	return seg
}

// segmentsWith is the least penalised segmentation for noise sigma.
func (d Daily) segmentsWith(f fitter, sigma float64) []segment {
	n := len(f.sums[0]) - 1
	// best[j]: the least cost of days [0, j); from[j]: where its last segment starts.
	best, from := make([]float64, n+1), make([]int, n+1)
	for j := 1; j <= n; j++ {
		best[j] = math.Inf(1)
		for i := 0; i <= j-d.MinSegment; i++ {
			if i > 0 && i < d.MinSegment {
				continue
			}
			_, c := f.fit(i, j, sigma)
			if i > 0 {
				c += best[i] + d.Penalty*f.logn
			}
			if c < best[j] {
				best[j], from[j] = c, i
			}
		}
	}
	if math.IsInf(best[n], 1) {
		s, _ := f.fit(0, n, sigma)
		return []segment{s}
	}
	var segs []segment
	for j := n; j > 0; j = from[j] {
		s, _ := f.fit(from[j], j, sigma)
		segs = append(segs, s)
	}
	slices.Reverse(segs)
	for k := 1; k < len(segs); k++ {
		_, whole := f.fit(segs[k-1].start, segs[k].end, sigma)
		_, a := f.fit(segs[k-1].start, segs[k].start, sigma)
		_, b := f.fit(segs[k].start, segs[k].end, sigma)
		segs[k].gain = whole - a - b
	}
	return segs
}
