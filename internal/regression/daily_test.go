package regression

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// dayName is the date of day i of a generated series.
func dayName(i int) string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format("20060102")
}

// dayIndex is the index of a generated series' day.
func dayIndex(day string) int {
	t, _ := time.Parse("20060102", day)
	return int(t.Sub(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).Hours() / 24)
}

// levelSeries is n days of one value each: level(i) plus normal noise of sd.
func levelSeries(rng *rand.Rand, n int, sd float64, level func(i int) float64) []Day {
	days := make([]Day, n)
	for i := range days {
		days[i] = Day{Day: dayName(i), Values: []float64{level(i) + sd*rng.NormFloat64()}}
	}
	return days
}

// p75 of a sample.
func p75(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return quantile(s, 0.75)
}

// pageLoads draws n LCPs of a page whose median is median: lognormal, with a log-sd of 0.5 (a
// p75 1.4 times the median, as field LCPs spread).
func pageLoads(rng *rand.Rand, n int, median float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = median * math.Exp(0.5*rng.NormFloat64())
	}
	return v
}

// cruxSeries is what the user-experience dataset reports of a page: each day the p75 of the
// last 28 days' page loads (perDay loads a day, whose median is median(i)), rounded to the ms.
func cruxSeries(rng *rand.Rand, n, perDay int, median func(i int) float64) []Day {
	var loads [][]float64
	days := make([]Day, 0, n)
	for i := -27; i < n; i++ {
		loads = append(loads, pageLoads(rng, perDay, median(i)))
		if i < 0 {
			continue
		}
		window := slices.Concat(loads[len(loads)-28:]...)
		days = append(days, Day{Day: dayName(i), Values: []float64{math.Round(p75(window))}})
	}
	return days
}

// rumSeries is real users' daily p75 of a page: views(i) loads on day i, whose median is
// median(i), with the day's count.
func rumSeries(rng *rand.Rand, n int, views func(i int) int, median func(i int) float64) []Day {
	days := make([]Day, n)
	for i := range days {
		v := views(i)
		days[i] = Day{Day: dayName(i), Values: []float64{math.Round(p75(pageLoads(rng, v, median(i))))}, Count: v}
	}
	return days
}

// changes are the changes of level Replay reports (recoveries left out), as day indices: the
// first bad day and the day reported.
func changes(reports []Report) (first, reported []int) {
	for _, r := range reports {
		if r.Change != nil {
			first = append(first, dayIndex(r.Change.FirstBad))
			reported = append(reported, dayIndex(r.Reported))
		}
	}
	return first, reported
}

// TestDailyTrendIsOneChange: a level that starts to grow and keeps growing is one change, dated
// where the growth began, not a staircase of changes every few days.
func TestDailyTrendIsOneChange(t *testing.T) {
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 35))
		days := levelSeries(rng, 120, 20, func(i int) float64 { return 1000 + 15*float64(max(0, i-40)) })
		first, reported := changes(Replay(SourceRUM, days, Threshold{Relative: 0.05}, true))
		if len(first) != 1 || first[0] < 33 || first[0] > 47 {
			t.Fatalf("seed %d: changes first bad on %v (reported on %v), want one from day 40 (within a week)", seed, first, reported)
		}
	}
}

// stepAt is a level of before until day at, of after from it on.
func stepAt(at int, before, after float64) func(day int) float64 {
	return func(day int) float64 {
		if day >= at {
			return after
		}
		return before
	}
}

// TestDailyRampIsOneChange: a step in the page loads reaches the user-experience dataset's
// 28-day p75 as a 28-day ramp; it is one change, its first bad day within 3 days of the step.
func TestDailyRampIsOneChange(t *testing.T) {
	lcp := Thresholds{}.For("lcp")
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 28))
		days := cruxSeries(rng, 150, 300, stepAt(70, 2000, 2400))
		first, reported := changes(Replay(SourceUX, days, lcp, true))
		if len(first) != 1 || first[0] < 67 || first[0] > 73 {
			t.Fatalf("seed %d: changes first bad on %v (reported on %v), want one from day 70 (±3)", seed, first, reported)
		}
	}
}

// TestDailyModerateStep: a step of one and a half standard deviations of the daily noise is
// found, dated within 5 days, in 7 series of 10 (one of one standard deviation, in 3: see
// docs/regressions.md).
func TestDailyModerateStep(t *testing.T) {
	found := 0
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 1))
		days := levelSeries(rng, 120, 50, stepAt(60, 1000, 1075))
		first, reported := changes(Replay(SourceRUM, days, Threshold{Relative: 0.02}, true))
		if slices.ContainsFunc(first, func(d int) bool { return d >= 55 && d <= 65 }) {
			found++
		}
		t.Logf("seed %d: first bad %v reported %v", seed, first, reported)
	}
	if found < 7 {
		t.Fatalf("found %d of 10 steps of 1.5 standard deviations, want 7 or more", found)
	}
}

// TestDailyConsecutiveChanges: a regression, its recovery, and another regression 3 days
// later: the second is found too, with no blind spot after the recovery.
func TestDailyConsecutiveChanges(t *testing.T) {
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 3))
		days := levelSeries(rng, 110, 20, func(i int) float64 {
			switch {
			case i >= 40 && i < 60:
				return 1300
			case i >= 63:
				return 1300
			}
			return 1000
		})
		reports := Replay(SourceRUM, days, Threshold{Relative: 0.1}, true)
		first, reported := changes(reports)
		var recovered []int
		for _, r := range reports {
			if r.Recovered != "" {
				recovered = append(recovered, dayIndex(r.Recovered))
			}
		}
		if len(first) != 2 || abs(first[0]-40) > 1 || abs(first[1]-63) > 1 || len(recovered) != 1 || abs(recovered[0]-60) > 1 {
			t.Fatalf("seed %d: changes from %v (reported %v), recoveries from %v; want changes from 40 and 63 and a recovery from 60", seed, first, reported, recovered)
		}
	}
}

// TestDailyFewViews: days of few views, whose p75 is far noisier, count less. Six days 8 %
// off (a 55-view p75 strays about 9 % from the page's) are no change when they had 55 views
// each, and are one when they had the page's usual 3,000 (whose p75 strays about 1 %).
func TestDailyFewViews(t *testing.T) {
	lcp := Threshold{Relative: 0.05}
	for seed := range uint64(10) {
		rng := rand.New(rand.NewPCG(seed, 55))
		days := rumSeries(rng, 70, func(int) int { return 3000 }, func(int) float64 { return 2000 })
		for i := 50; i < 56; i++ {
			days[i].Values[0] = math.Round(days[i].Values[0] * 1.08)
			days[i].Count = 55
		}
		if first, reported := changes(Replay(SourceRUM, days, lcp, true)); len(first) > 0 {
			t.Fatalf("seed %d: changes from %v (reported %v) on six days of 55 views", seed, first, reported)
		}
		for i := 50; i < 56; i++ {
			days[i].Count = 3000
		}
		if first, _ := changes(Replay(SourceRUM, days, lcp, true)); len(first) != 1 || first[0] != 50 {
			t.Fatalf("seed %d: changes from %v when the same six days had the usual views, want one from day 50", seed, first)
		}
	}
}

// BenchmarkUXShaped scores the daily detector on generated user-experience series: each day
// 200 page loads (lognormal LCPs), the dataset's 28-day p75 of them, 200 days; half the pages
// step up by 15 to 40 % on a day from 80 to 150, half never change. Reported: the steps found
// once with their first bad day within 3 days (%), the reports beyond one per step, the false
// reports per page-year of the unchanged pages, and the median days from step to report.
// Under -short, 4 pages.
func BenchmarkUXShaped(b *testing.B) {
	scoreShaped(b, 2026, 200, func(rng *rand.Rand, still bool, lcp Threshold) (int, []Report) {
		at, size := 80+rng.IntN(71), 1.15+0.25*rng.Float64()
		if still {
			at = math.MaxInt
		}
		days := cruxSeries(rng, 200, 200, stepAt(at, 2000, 2000*size))
		return at, Replay(SourceUX, days, lcp, true)
	})
}

// scoreShaped scores the daily detector, with lcp's default least change, on 100 generated
// pages (4 under -short) of days days each, every other one still (never stepping): page draws
// a page's series from its own generator (seeded with its number and seed) and answers its
// step's day (math.MaxInt when still) and the detector's reports.
func scoreShaped(b *testing.B, seed uint64, days int, page func(rng *rand.Rand, still bool, lcp Threshold) (int, []Report)) {
	pages := 100
	if testing.Short() {
		pages = 4
	}
	lcp := Thresholds{}.For("lcp")
	var score stepScore
	for range b.N {
		score = stepScore{}
		for p := range pages {
			score.add(page(rand.New(rand.NewPCG(uint64(p), seed)), p%2 == 1, lcp))
		}
	}
	score.report(b, days)
}

// stepScore tallies a detector's reports on generated pages, half of which step at a known
// day: a stepped page counts as good when exactly one change is found within three days of its
// step (how late each was reported kept), any other change it reports as extra; every change
// reported on a page that never steps is false.
type stepScore struct {
	good, extra, falses, steps, still int
	delays                            []int
}

// add scores one page's reports; at is the day of its step, math.MaxInt when it has none.
func (s *stepScore) add(at int, reports []Report) {
	first, reported := changes(reports)
	if at == math.MaxInt {
		s.still++
		s.falses += len(first)
		return
	}
	s.steps++
	n := 0
	for i, f := range first {
		if abs(f-at) <= 3 {
			n++
			s.delays = append(s.delays, reported[i]-at)
		}
	}
	if n == 1 {
		s.good++
	}
	s.extra += len(first) - min(n, 1)
}

// report reports the benchmark's figures, the false changes per page-year of pages of days days.
func (s stepScore) report(b *testing.B, days int) {
	b.ReportMetric(100*float64(s.good)/float64(s.steps), "found-once-within-3d%")
	b.ReportMetric(float64(s.extra)/float64(s.steps), "extra-reports/step")
	b.ReportMetric(float64(s.falses)/(float64(s.still)*float64(days)/365), "false/page-year")
	if len(s.delays) > 0 {
		b.ReportMetric(medianInt(s.delays), "median-delay-days")
	}
}

// TestDailyScaleFree: the daily detector reports the same days whatever the series' unit (a
// generic series, no least change): its noise and prices come from the series itself.
func TestDailyScaleFree(t *testing.T) {
	for _, s := range loadTCPD(t)[:8] {
		days := tcpdDays(s.Values)
		scaledDays := tcpdDays(s.Values)
		for i := range scaledDays {
			scaledDays[i].Values[0] = 1000*scaledDays[i].Values[0] + 7
		}
		a, b := Replay("generic", days, Threshold{}, true), Replay("generic", scaledDays, Threshold{}, true)
		if len(a) != len(b) {
			t.Fatalf("%s: %d reports, %d once scaled", s.Name, len(a), len(b))
		}
		for i := range a {
			if a[i].Reported != b[i].Reported || (a[i].Change == nil) != (b[i].Change == nil) || a[i].Change != nil && a[i].Change.FirstBad != b[i].Change.FirstBad {
				t.Fatalf("%s: report %d differs once scaled: %+v, %+v", s.Name, i, a[i], b[i])
			}
		}
	}
}

// BenchmarkRUMShaped scores the daily detector on generated real-user series: 100 pages, 365
// days, each page's typical views a day from 60 to 6,000 (log-uniform), each day's views that
// times 0.6 to 1.4 and 0.7 on weekends, each view's LCP lognormal (log-sd 0.5) around 2,000 ms,
// 4 % slower on weekends; the daily p75 with its views, days under MinRUMViews left out as the
// watcher does. Half the pages step up by 10 to 30 % on a day from 100 to 300. lcp's default
// least change. Reported as BenchmarkUXShaped's figures. Under -short, 4 pages.
func BenchmarkRUMShaped(b *testing.B) {
	scoreShaped(b, 75, year, func(rng *rand.Rand, still bool, lcp Threshold) (int, []Report) {
		typical := 60 * math.Pow(100, rng.Float64())
		at, size := 100+rng.IntN(201), 1.1+0.2*rng.Float64()
		if still {
			at = math.MaxInt
		}
		weekend := func(i int) bool { return i%7 >= 5 }
		all := rumSeries(rng, year, func(i int) int {
			v := typical * (0.6 + 0.8*rng.Float64())
			if weekend(i) {
				v *= 0.7
			}
			return int(v)
		}, func(i int) float64 {
			m := 2000.0
			if weekend(i) {
				m *= 1.04
			}
			if i >= at {
				m *= size
			}
			return m
		})
		days := slices.DeleteFunc(all, func(d Day) bool { return d.Count < MinRUMViews })
		return at, Replay(SourceRUM, days, lcp, true)
	})
}
