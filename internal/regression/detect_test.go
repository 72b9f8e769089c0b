package regression

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestMannWhitneyPublishedExample holds the p-value to a published example: SciPy's
// mannwhitneyu documentation (ages of male and female employees, U1 = 17, exact two-sided
// p = 0.1111).
func TestMannWhitneyPublishedExample(t *testing.T) {
	males := []float64{19, 22, 16, 29, 24}
	females := []float64{20, 11, 17, 12}
	if p := mannWhitneyP(males, females); math.Abs(p-0.1111) > 0.0001 {
		t.Fatalf("p = %.4f, want 0.1111", p)
	}
	if p := mannWhitneyP([]float64{1, 1, 1}, []float64{1, 1}); p != 1 {
		t.Fatalf("equal samples: p = %v, want 1", p)
	}
}

// makeSeries makes n days of three runs each around level (relative noise cv), with the level
// multiplied by factor from day onset on; day 0 is 2026-01-01.
func makeSeries(rng *rand.Rand, n int, level, cv float64, onset int, factor float64) []Day {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	out := make([]Day, n)
	for i := range out {
		l := level
		if onset >= 0 && i >= onset {
			l *= factor
		}
		out[i].Day = start.AddDate(0, 0, i).Format("20060102")
		for range 3 {
			out[i].Values = append(out[i].Values, l*(1+cv*rng.NormFloat64()))
		}
	}
	return out
}

func TestDetect(t *testing.T) {
	lcp := Thresholds{}.For("lcp")
	d := NewDetector()
	type detectCase struct {
		name    string
		days    []Day
		found   bool
		worse   bool
		onset   int
		minDays int // days the change must be found after (persistence)
	}
	cases := []detectCase{
		{name: "quiet", days: makeSeries(rand.New(rand.NewPCG(1, 1)), 30, 1500, 0.03, -1, 1)},
		{name: "step 20 % after three days", days: makeSeries(rand.New(rand.NewPCG(2, 1)), 23, 1500, 0.03, 20, 1.2), found: true, worse: true, onset: 20},
		{name: "step 20 % on its first two days only", days: makeSeries(rand.New(rand.NewPCG(3, 1)), 22, 1500, 0.03, 20, 1.2)},
		{name: "improvement 30 %", days: makeSeries(rand.New(rand.NewPCG(4, 1)), 25, 1500, 0.03, 21, 0.7), found: true, onset: 21},
		{name: "step under the least change (5 %)", days: makeSeries(rand.New(rand.NewPCG(5, 1)), 25, 1500, 0.01, 20, 1.05)},
		{name: "step under 100 ms although 15 %", days: makeSeries(rand.New(rand.NewPCG(6, 1)), 25, 500, 0.01, 20, 1.15)},
	}
	// A single day far off, then the old level again.
	outlier := makeSeries(rand.New(rand.NewPCG(7, 1)), 25, 1500, 0.03, -1, 1)
	for i := range outlier[23].Values {
		outlier[23].Values[i] *= 2
	}
	cases = append(cases, detectCase{name: "one-day outlier", days: outlier})
	// A large step (the demo's heavier hero: LCP 1.35 s to 5.1 s) after a day a few percent
	// high: that day is the old level's, not the change's first (the cause would compare two
	// loads of the old version).
	bigStep := makeSeries(rand.New(rand.NewPCG(4, 9)), 30, 1350, 0.01, 26, 3.8)
	for i := range bigStep[25].Values {
		bigStep[25].Values[i] *= 1.08
	}
	cases = append(cases, detectCase{name: "large step after a high day", days: bigStep, found: true, worse: true, onset: 26})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch, found := d.Detect(c.days, 0, lcp, true)
			if found != c.found {
				t.Fatalf("found = %v (%+v), want %v", found, ch, c.found)
			}
			if !found {
				return
			}
			if ch.FirstBad != c.days[c.onset].Day || ch.LastGood != c.days[c.onset-1].Day || ch.Worse != c.worse {
				t.Fatalf("change %+v, want first bad day %s, worse %v", ch, c.days[c.onset].Day, c.worse)
			}
			if ch.P >= d.Alpha || math.Abs(ch.Delta-(ch.After.Median-ch.Before.Median)) > 1e-9 {
				t.Fatalf("change %+v", ch)
			}
		})
	}
}

func TestDetectFromAndRecovered(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 1))
	d, lcp := NewDetector(), Thresholds{}.For("lcp")
	days := makeSeries(rng, 24, 1500, 0.02, 15, 1.3)
	ch, found := d.Detect(days, 0, lcp, true)
	if !found || ch.FirstBad != days[15].Day {
		t.Fatalf("change %+v found %v, want one from %s", ch, found, days[15].Day)
	}
	// Once recorded, the same step is not found again from its first day on.
	if again, found := d.Detect(days, 15, lcp, true); found {
		t.Fatalf("found the recorded change again: %+v", again)
	}
	if _, ok := d.Recovered(days, ch); ok {
		t.Fatal("recovered while still at the new level")
	}
	// Back to the old level for three days: recovered from the first of them.
	back := makeSeries(rand.New(rand.NewPCG(9, 1)), 3, 1500, 0.02, -1, 1)
	for i := range back {
		back[i].Day = fmt.Sprint(20260125 + i)
	}
	days = append(days, back...)
	first, ok := d.Recovered(days, ch)
	if !ok || first != 24 {
		t.Fatalf("recovered = %v from %d, want from 24", ok, first)
	}
	// Two days back are not a recovery yet.
	if _, ok := d.Recovered(days[:26], ch); ok {
		t.Fatal("two days back counted as a recovery")
	}
}

func TestThresholds(t *testing.T) {
	custom := Thresholds{"lcp": {Relative: 0.2, Absolute: 300}}
	if err := custom.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := custom.For("lcp"); got.least(1000) != 300 || custom.For("cls").Absolute != 0.05 {
		t.Fatalf("thresholds %+v", custom.Resolved())
	}
	for _, bad := range []Thresholds{{"nope": {Absolute: 1}}, {"lcp": {}}, {"lcp": {Relative: -1}}} {
		if bad.Validate() == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
}
