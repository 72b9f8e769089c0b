package main

import (
	"math"
	"strings"
	"testing"
)

// TestDashboardCompare drives the comparison view in Chromium over the demo website: the
// regression of the deploy links to the comparison of its last good and first bad day, which
// shows the API's metrics and changes, both filmstrips (every frame loaded) and the requests
// that changed; the page view picks two days; a day without a result is an error in place of
// the view. It writes the view's screenshot (see screenshotDir).
func TestDashboardCompare(t *testing.T) {
	d := startDemo(t, 1)
	shots := screenshotDir(t)
	W := "/" + d.site.ID
	type link struct{ Page, Device, Base, Target, Path string }
	var regs struct {
		Result struct {
			List []struct {
				ID, Metric string
				Comparison *link
			}
		}
	}
	d.call(t, "GET", W+"/regressions?kind=regression&source=lab", dashViewerKey, "", 200, &regs)
	var c *link
	for _, r := range regs.Result.List {
		if r.Comparison != nil {
			c = r.Comparison
		}
	}
	if c == nil {
		t.Fatalf("no lab regression links to a comparison: %+v", regs.Result.List)
	}
	var cmp struct {
		Metrics []struct {
			Name          string
			Change        *float64
			ChangePercent *float64
		}
		Loads *struct {
			Requests []struct{ Kind, URL string }
		}
	}
	d.call(t, "GET", c.Path, dashViewerKey, "", 200, &cmp)
	if cmp.Loads == nil || len(cmp.Loads.Requests) == 0 {
		t.Fatalf("the demo's comparison %+v: want its loads, with the requests that changed", cmp)
	}

	b := launchBrowser(t)
	tb := d.open(t, b)
	tb.goTo("")
	tb.signIn(dashViewerKey)
	tb.waitSignedIn()

	// From the regression to its comparison.
	tb.view("#/w/" + d.site.ID + "/regressions")
	tb.click("a.compare", "Compare "+c.Base+" with "+c.Target)
	tb.waitFor("the comparison", `() => document.querySelector('#main h1') && document.querySelector('#main h1').textContent.startsWith('Compare') && !document.getElementById('main').hasAttribute('aria-busy')`)
	if h1 := tb.text("#main h1"); h1 != "Compare "+c.Base+" with "+c.Target {
		t.Errorf("heading %q", h1)
	}
	view := tb.text("#main")
	for _, m := range cmp.Metrics {
		if m.Name != "lcp" || m.Change == nil {
			continue
		}
		sign := "+"
		if *m.Change < 0 {
			sign = "−"
		}
		if want := sign + uiNumber(math.Abs(*m.Change), "ms"); !strings.Contains(view, want) {
			t.Errorf("the view does not show LCP's change %s", want)
		}
	}
	for _, r := range cmp.Loads.Requests {
		shown := strings.TrimPrefix(strings.TrimPrefix(r.URL, "http://"), "https://")
		if len(shown) > 80 {
			shown = shown[:80]
		}
		if !strings.Contains(view, shown) {
			t.Errorf("the changed request %s (%s) is not listed", r.URL, r.Kind)
		}
	}
	tb.waitFor("the frames", `() => { const imgs = [...document.querySelectorAll('.cmp-film img')];
		return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0) }`)
	if n := tb.eval(`() => document.querySelectorAll('.cmp-film tbody tr').length`).(float64); n != 2 {
		t.Errorf("%v filmstrip rows, want the base's and the target's", n)
	}
	// The demo is measured by simulation: the view says its pictures are the fast loads.
	simulated := strings.Contains(tb.text("#main .sub"), "simulated throttling")
	if note := tb.eval(`() => document.querySelector('#main .method-note') !== null`); note != simulated {
		t.Errorf("the simulated-throttling note shown: %v, for a comparison subtitled %q", note, tb.text("#main .sub"))
	}
	tb.eval(`() => window.scrollTo(0, 0)`)
	tb.screenshot(shots, "compare")
	tb.narrow(shots, "compare", "")

	// The page view picks two days.
	tb.view("#/w/" + d.site.ID + "/page/" + c.Page + "?device=" + c.Device)
	tb.eval(`(a, b) => { document.getElementById('cmp-base').value = a; document.getElementById('cmp-target').value = b; }`, c.Base, c.Target)
	tb.click("#compare-picker button", "Compare")
	tb.waitFor("the comparison from the page", `() => document.querySelector('#main h1').textContent.startsWith('Compare') && !document.getElementById('main').hasAttribute('aria-busy')`)
	if h1 := tb.text("#main h1"); h1 != "Compare "+c.Base+" with "+c.Target {
		t.Errorf("heading from the page view %q", h1)
	}

	// A day without a result: the problem in place of the view.
	tb.view("#/w/" + d.site.ID + "/compare?page=" + c.Page + "&device=" + c.Device + "&base=2001-01-01&target=" + c.Target)
	if h1, p := tb.text("#main h1"), tb.text("#main .error"); h1 != "Not found" || !strings.Contains(p, "2001-01-01") {
		t.Errorf("an unknown day: %q, %q", h1, p)
	}
}
