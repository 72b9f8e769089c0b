package dashboardtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/localtest"
)

// realUserAgents are the browsers of the real users the test sends beacons as.
var realUserAgents = []string{
	"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36",
	"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
	"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36",
}

// TestDashboardRealUsers drives the real-user view and the page view's real users in Chromium
// over the local service, with page views sent as browsers send them (user agents, hints,
// attribution): the numbers shown are the API's, a mistyped filter is pointed at in place and
// a refused report leaves the view standing. It writes the views' screenshots (see
// screenshotDir).
func TestDashboardRealUsers(t *testing.T) {
	d := startService(t, 1, false)
	shots := screenshotDir(t)
	siteID, pages := d.website(t, "shop.example", "Shop", `{"groups":[{"name":"Products","pattern":"/product/*"},{"name":"Home","pattern":"/"}]}`, `[{"url":"/","alias":"Home"},{"url":"/index.html?from=ad","alias":"Landing"}]`)
	W := "/" + siteID
	landing := pages[1]
	if landing.URL != "/index.html?from=ad" {
		landing = pages[0]
	}

	const views = 60
	for i := range views {
		url := []string{"https://shop.example/", "https://shop.example/product/shoe", "https://shop.example/index.html?from=ad&utm=x", "https://shop.example/index.html"}[i%4]
		lcp := 900 + 97*i
		attribution := fmt.Sprintf(`{"lcp":{"e":"main>img.hero","u":"https://cdn.shop.example/hero.jpg","p":[120,%d,%d,%d]},
			"inp":{"e":"button#buy","t":"pointer","p":[12,%d,20],"s":[{"u":"https://www.googletagmanager.com/gtm.js","f":"","d":%d}]},
			"cls":{"e":"main>p.lead","t":640}}`, lcp/5, lcp/2, lcp-120-lcp/5-lcp/2, 150+i*3, 140+i*3)
		body := fmt.Sprintf(`{"w":%q,"u":%q,"m":{"lcp":%d,"inp":%d,"cls":0.%03d,"ttfb":%d,"fcp":%d},"s":{"n":"navigate","e":"4g"},"a":%s}`,
			siteID, url, lcp, 182+i*3, 20+i*3, 200+i*5, 600+i*20, attribution)
		d.beacon(t, body, realUserAgents[i%len(realUserAgents)])
	}
	dist := d.waitForViews(t, W+"/field-testing/distribution?metric=lcp", views)

	b := launchBrowser(t)
	tb := d.signedIn(t, b, localtest.ViewerKey)

	t.Run("real-user view", func(t *testing.T) {
		tb.t = t
		tb.view("#/w/" + siteID + "/rum?vital=lcp&seg=device&days=7")
		var seg fieldReport
		d.Call(t, "GET", W+"/field-testing/segments?metric=lcp&by=device", localtest.ViewerKey, "", 200, &seg)
		panel := tb.text("#rum-panel")
		if !strings.Contains(panel, uiNumber(dist.Result.Value, "ms")) || !strings.Contains(panel, "page views") {
			t.Errorf("the panel %q does not show the API's p75 %v", panel, dist.Result.Value)
		}
		table := tb.text("#rum-segments")
		for _, row := range seg.Result.List {
			if want := row.Key + "\t" + fmt.Sprint(row.Views); !strings.Contains(table, want) || !strings.Contains(table, uiNumber(row.Value, "ms")) {
				t.Errorf("segments table %q: no row %q with p75 %v", table, want, row.Value)
			}
		}
		if attr := tb.text("#rum-attributions"); !strings.Contains(attr, "main>img.hero") || !strings.Contains(attr, "https://cdn.shop.example/hero.jpg") {
			t.Errorf("top attributions %q: want the hero image", attr)
		}
		if total, blank := tb.chartCanvases(); total < 3 || blank > 0 {
			t.Errorf("%d charts, %d blank: want the trend, ratings and distribution drawn", total, blank)
		}
		tb.screenshot(shots, "real-users-segments")

		// INP: targets, the scripts of the interactions and their entities.
		tb.view("#/w/" + siteID + "/rum?vital=inp&days=7")
		if attr := tb.text("#rum-attributions"); !strings.Contains(attr, "button#buy") || !strings.Contains(attr, "Google Tag Manager") {
			t.Errorf("INP attributions %q: want the button and Google Tag Manager", attr)
		}
		tb.screenshot(shots, "real-users-inp")

		// A mistyped country is pointed at in place; the view stays.
		tb.fill("#rum-country", "Germany")
		tb.click("form[aria-label='Real users'] button[type=submit]", "Show")
		tb.waitFor("the field's message", `() => document.getElementById('rum-country-error').textContent.length > 0`)
		if tb.eval(`() => document.getElementById('rum-country').getAttribute('aria-invalid')`) != "true" || !tb.has("#rum-panel") {
			t.Error("a bad country replaced the view or was not marked")
		}
		// A filter the API refuses shows its problem where the report would be.
		tb.view("#/w/" + siteID + "/rum?vital=lcp&browser=netscape&days=7")
		if h1 := tb.text("#main h1"); h1 != "Real users" {
			t.Errorf("a refused report replaced the view: %q", h1)
		}
		if p := tb.text("#rum-panel"); !strings.Contains(p, "browser") {
			t.Errorf("the panel %q does not name the refused parameter", p)
		}
		if tb.eval(`() => document.getElementById('rum-browser').getAttribute('aria-invalid')`) != "true" {
			t.Error("the refused filter is not marked in the form")
		}
		tb.screenshot(shots, "real-users-refused")
	})

	t.Run("page view", func(t *testing.T) {
		tb.t = t
		tb.view("#/w/" + siteID + "/page/" + landing.ID + "?device=mobile&days=7")
		var page fieldReport
		d.Call(t, "GET", W+"/field-testing/distribution?metric=lcp&device=mobile,tablet&page="+landing.ID, localtest.ViewerKey, "", 200, &page)
		if page.Result.Views == 0 {
			t.Fatal("no real-user view of the landing page (its query must match)")
		}
		field := tb.text("#field-vs-lab")
		if !strings.Contains(field, "Real users p75") || !strings.Contains(field, "Chrome UX Report p75") || !strings.Contains(field, uiNumber(page.Result.Value, "ms")) {
			t.Errorf("field against lab %q: want both sources named and the real users' p75 %v", field, page.Result.Value)
		}
		if rum := tb.text("#page-rum"); !strings.Contains(rum, "main>img.hero") {
			t.Errorf("the page's real users %q: want the LCP element", rum)
		}
		if n := tb.eval(`() => document.querySelectorAll('#page-rum .plot canvas').length`).(float64); n < 3 {
			t.Errorf("%v charts in the page's real users, want 3", n)
		}
		tb.screenshot(shots, "page-real-users")
	})
}

// fieldReport is the answer of a report of real users' page views: their count, the p75 (or the
// view's value), the views of each rating and the rows.
type fieldReport struct {
	Result struct {
		Views   int
		Value   float64
		Ratings map[string]struct{ Views int }
		List    []struct {
			Key   string
			Views int
			Value float64
		}
	}
}

// waitForViews reads the report at path, as a viewer, until it counts views page views (the
// aggregator folds the beacons a batch at a time), and returns it.
func (d *dashboard) waitForViews(t testing.TB, path string, views int) fieldReport {
	t.Helper()
	var r fieldReport
	d.WaitFor(t, "the views folded", func() bool {
		r = fieldReport{}
		d.Call(t, "GET", path, localtest.ViewerKey, "", 200, &r)
		return r.Result.Views == views
	})
	return r
}
