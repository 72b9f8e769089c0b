package dashboardtest

import (
	"context"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/localtest"
)

// TestDashboardFieldVerdict: in real Chromium, a lab incident shows its field verdict with its
// numbers, another awaits one; the page view charts the Chrome UX Report's 40 weekly periods of
// the page and of its origin beside the daily records. Screenshots of both.
func TestDashboardFieldVerdict(t *testing.T) {
	d, shop := startShop(t)
	ctx := context.Background()
	site, home, cart, now, day := shop.site, shop.home, shop.cart, shop.now, shop.day
	lab := func(page model.Page, back int, before, after float64) model.Regression {
		r := shop.labRegression("lab"+page.ID, page, "mobile", "lcp", back, before, after)
		r.Incident = model.IncidentID(site, r.Subject(), r.Kind, r.FirstBad)
		for b := back + 10; b >= 0; b-- {
			v := before
			if b <= back {
				v = after
			}
			r.Days = append(r.Days, model.DayValue{Day: day(b), Value: v})
		}
		if _, err := d.Store.PutRegression(ctx, site, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	confirmed := lab(home, 9, 2100, 2900)
	lab(cart, 2, 1500, 1900)
	v := model.Verdict{Incident: confirmed.Incident, Page: home.ID, Device: "mobile", Verdict: model.VerdictConfirmed, Day: day(5), Decided: now.AddDate(0, 0, -5),
		Checks:  []model.VerdictCheck{{Source: "rum", Metric: "lcp", From: day(16), To: day(6), Before: 2240, After: 3010, Noise: 224, DaysBefore: 7, DaysAfter: 4, Enough: true, Moved: true}},
		Summary: "Confirmed in the field: real users' p75 LCP 2240 ms → 3010 ms, +34 %; noise 224 ms."}
	if _, _, err := d.Store.PutVerdict(ctx, site, confirmed.FirstBad, v); err != nil {
		t.Fatal(err)
	}
	// 40 weekly periods of the home page (a step 12 weeks ago, ramping over four) and of the
	// origin, and the daily records of the last days.
	lastSat := now.AddDate(0, 0, -int(now.Weekday()+1)%7-1)
	for _, page := range []string{home.ID, ""} {
		h := model.UXHistory{Page: page, Device: "mobile", Fetched: now}
		for i := range 40 {
			last := lastSat.AddDate(0, 0, -7*(39-i))
			lcp, inp, cls := 1900.0+float64(i%4)*25, 160.0+float64(i%3)*6, 0.05
			if page != "" {
				lcp += 900 * min(max(float64(i-27)/4, 0), 1)
				inp += 40 * min(max(float64(i-27)/4, 0), 1)
			} else {
				lcp, inp, cls = lcp+200, inp+20, 0.08
			}
			h.Periods = append(h.Periods, model.UXPeriod{First: model.Day(last.AddDate(0, 0, -27)), Last: model.Day(last), Vitals: map[string]model.Vital{
				"lcp": {P75: lcp, Good: 70, NeedsImprovement: 20, Poor: 10}, "inp": {P75: inp, Good: 80, NeedsImprovement: 15, Poor: 5},
				"cls": {P75: cls, Good: 90, NeedsImprovement: 7, Poor: 3}}})
		}
		if err := d.Store.PutUXHistory(ctx, site, h); err != nil {
			t.Fatal(err)
		}
	}
	for back := 10; back >= 0; back-- {
		r := model.UXResult{Device: "mobile", Day: day(back), Collected: now, Vitals: map[string]model.Vital{
			"lcp": {P75: 2800 + float64(back)*5, Good: 62, NeedsImprovement: 25, Poor: 13}, "inp": {P75: 198, Good: 77, NeedsImprovement: 17, Poor: 6},
			"cls": {P75: 0.05, Good: 90, NeedsImprovement: 7, Poor: 3}}}
		if err := d.Store.PutUXResult(ctx, site, home, r); err != nil {
			t.Fatal(err)
		}
	}

	b := launchBrowser(t)
	shots := screenshotDir(t)
	W := "#/w/" + site.ID
	tb := d.signedIn(t, b, localtest.AdminKey)

	t.Run("incident verdict", func(t *testing.T) {
		tb.t = t
		tb.view(W + "/regressions")
		text := tb.text("#incident-" + confirmed.Incident)
		if !strings.Contains(text, "Confirmed in the field") || !strings.Contains(text, "real users' p75 LCP 2240 ms → 3010 ms, +34 %; noise 224 ms") {
			t.Errorf("the confirmed incident says %q", text)
		}
		if n := tb.eval(`() => document.querySelectorAll('.verdict[data-verdict="confirmed_in_field"]').length`).(float64); n != 1 {
			t.Errorf("%v confirmed verdicts shown, want 1", n)
		}
		if awaited := tb.eval(`() => [...document.querySelectorAll('p.verdict')].map(p => p.textContent).join('|')`).(string); !strings.Contains(awaited, "Field verdict: awaited") {
			t.Errorf("verdicts %q: the cart's incident should await its verdict", awaited)
		}
		tb.screenshot(shots, "incident-verdict")
	})

	t.Run("40-week history", func(t *testing.T) {
		tb.t = t
		tb.view(W + "/page/" + home.ID + "?device=mobile")
		tb.waitFor("the field history", `() => document.querySelectorAll('#field-history figure.chart').length === 3`)
		text := tb.text("main")
		if !strings.Contains(text, "Field history: 40 weeks") || !strings.Contains(text, "40 weekly collection periods of this page and 40 of its origin") {
			t.Errorf("the page view lacks the history's heading and count")
		}
		// The LCP chart's numbers: the 40 periods and the daily records, each a row.
		rows := tb.eval(`() => document.querySelectorAll('#field-history figure.chart')[0].querySelectorAll('details tbody tr').length`).(float64)
		if rows < 40 {
			t.Errorf("the LCP history lists %v dates, want the 40 periods at least", rows)
		}
		if legend := tb.eval(`() => document.querySelector('#field-history .legend').textContent`).(string); !strings.Contains(legend, "This page, weekly") ||
			!strings.Contains(legend, "Origin, weekly") || !strings.Contains(legend, "This page, daily") {
			t.Errorf("legend %q", legend)
		}
		tb.eval(`() => document.querySelector('#field-history').scrollIntoView()`)
		tb.screenshot(shots, "field-history")
	})
}
