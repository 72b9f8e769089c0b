package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestDashboardSoftNavigations drives the real-user view and a page view in Chromium over the
// local service with the beacons of single-page app visits, as the snippet sends them (a
// lifecycle's views in one beacon): hard loads and soft navigations are told apart, the share
// of back/forward navigations the cache restored and its reasons for the others are shown, and
// prerendered views counted; the numbers are the API's. It writes the views' screenshots (see
// screenshotDir).
func TestDashboardSoftNavigations(t *testing.T) {
	d := startService(t, 1, false)
	shots := screenshotDir(t)
	var w struct{ ID string }
	d.call(t, "POST", "/account/websites", dashAdminKey, `{"domain":"spa.example","displayName":"SPA shop"}`, 201, &w)
	W := "/" + w.ID
	d.call(t, "PUT", W+"/field-testing/settings", dashAdminKey, `{"groups":[{"name":"Products","pattern":"/product/*"}]}`, 200, nil)
	var pages []struct{ ID, URL string }
	d.call(t, "POST", W+"/settings/pages", dashAdminKey, `[{"url":"/cart","alias":"Cart"}]`, 200, &pages)

	// 24 visits: a hard load of the home page (every third a back navigation the cache did not
	// restore, every fourth one it restored, one in six prerendered), then the router's routes
	// to a product and the cart.
	const visits = 24
	view := func(id int, url, nav string, lcp, inp int, extra string) string {
		route := strings.Split(url, "/")[1]
		if route == "" {
			route = "home"
		}
		// A soft navigation names the link that started it.
		start := ""
		if nav == "soft" {
			start = fmt.Sprintf(`,"nav":{"e":"#to-%s","t":"pointer"}`, route)
		}
		return fmt.Sprintf(`{"i":"6b08cab1%016x","u":"https://spa.example%s","m":{"lcp":%d,"inp":%d,"cls":0.01,"fcp":%d%s},"s":{"n":%q,"e":"4g"%s},"a":{"lcp":{"e":"#lcp-%s","p":[0,0,0,%d]},"inp":{"e":"#work-%s","t":"pointer","p":[2,%d,8]}%s}}`,
			id, url, lcp, inp, lcp, map[bool]string{true: `,"ttfb":180`, false: ""}[nav != "soft"], nav, extra, route, lcp, route, inp-10, start)
	}
	hard, soft, restored, notRestored, prerendered := 0, 0, 0, 0, 0
	for i := range visits {
		nav, extra := "navigate", ""
		switch {
		case i%3 == 0:
			nav, extra = "back-forward", `,"b":["unload-listener","masked"]`
			notRestored++
		case i%4 == 1:
			nav = "back-forward-cache"
			restored++
		case i%6 == 2:
			nav = "prerender"
			prerendered++
		}
		hard++
		views := []string{
			view(i*3, "/", nav, 1400+20*i, 120+i, extra),
			view(i*3+1, fmt.Sprintf("/product/%d", 100+i), "soft", 300+10*i, 180+2*i, ""),
			view(i*3+2, "/cart", "soft", 250+5*i, 90+i, ""),
		}
		soft += 2
		body := fmt.Sprintf(`{"w":%q,"c":{},"v":[%s]}`, w.ID, strings.Join(views, ","))
		req, _ := http.NewRequest("POST", d.base+"/collect", strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("User-Agent", realUserAgents[0])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 202 {
			t.Fatalf("beacon %d: %d", i, res.StatusCode)
		}
	}
	type segments struct {
		Result struct {
			Views int
			List  []struct {
				Key   string
				Views int
				Value float64
			}
		}
	}
	var seg segments
	d.waitFor(t, "the views folded", func() bool {
		d.call(t, "GET", W+"/field-testing/segments?metric=lcp&by=navigation", dashViewerKey, "", 200, &seg)
		return seg.Result.Views == hard+soft
	})
	var softP75 float64
	for _, r := range seg.Result.List {
		if r.Key == "soft" {
			softP75 = r.Value
		}
	}

	b := launchBrowser(t)
	tb := d.open(t, b)
	tb.goTo("")
	tb.signIn(dashViewerKey)
	tb.waitSignedIn()

	t.Run("real-user view", func(t *testing.T) {
		tb.t = t
		tb.view("#/w/" + w.ID + "/rum?vital=lcp&seg=navigation&days=7")
		box := tb.text("#rum-navigations")
		for _, want := range []string{
			fmt.Sprint(hard) + "\npage loads", fmt.Sprint(soft) + "\nsoft navigations", uiNumber(softP75, "ms"),
			fmt.Sprintf("of %d back/forward navigations restored", restored+notRestored), fmt.Sprint(prerendered) + "\nprerendered",
			"unload-listener", "masked",
		} {
			if !strings.Contains(box, want) {
				t.Errorf("the navigations %q: no %q", box, want)
			}
		}
		share := fmt.Sprintf("%d %%", 100*restored/(restored+notRestored))
		if got := tb.text("#rum-bfcache b"); !strings.HasPrefix(got, strings.TrimSuffix(share, " %")) {
			t.Errorf("the cache's share %q, want %s", got, share)
		}
		if table := tb.text("#rum-segments"); !strings.Contains(table, "soft\t"+fmt.Sprint(soft)) {
			t.Errorf("LCP by navigation %q: want the soft views", table)
		}
		tb.screenshot(shots, "real-users-navigations")
		// The product group, which only the router reaches: its routes' own LCP elements.
		tb.view("#/w/" + w.ID + "/rum?vital=lcp&group=Products&days=7")
		if attr := tb.text("#rum-attributions"); !strings.Contains(attr, "#lcp-product") || strings.Contains(attr, "#lcp-cart") {
			t.Errorf("the product routes' LCP elements %q", attr)
		}
		if n, h := tb.text("#rum-soft b"), tb.text("#rum-hard b"); n != fmt.Sprint(visits) || h != "0" {
			t.Errorf("the product group: %q soft views and %q page loads, want %d and none", n, h, visits)
		}
		// Soft navigations alone, site-wide: the routes' LCP elements without the home page's,
		// and the links that started them with their routes' views; INP's scripts are not kept
		// by navigation, which the view says.
		var starts struct {
			Result struct {
				SoftNavigationStarts []struct {
					Target string
					Views  int
					Value  float64
				}
			}
		}
		d.call(t, "GET", W+"/field-testing/attributions?metric=lcp&navigation=soft", dashViewerKey, "", 200, &starts)
		tb.view("#/w/" + w.ID + "/rum?vital=lcp&navigation=soft&days=7")
		attr := tb.text("#rum-attributions")
		if strings.Contains(attr, "#lcp-home") || !strings.Contains(attr, "#lcp-cart") {
			t.Errorf("the soft views' LCP elements %q: want the routes' and not the home page's", attr)
		}
		starters := tb.text("#rum-attributions .attr-softNavigationStarts")
		if len(starts.Result.SoftNavigationStarts) != 2 {
			t.Fatalf("the API's soft navigation starts: %+v, want the product and cart links", starts.Result.SoftNavigationStarts)
		}
		for _, st := range starts.Result.SoftNavigationStarts {
			if st.Views != visits || !strings.Contains(starters, st.Target+" (pointer)") || !strings.Contains(starters, uiNumber(st.Value, "ms")) {
				t.Errorf("the interactions that started soft navigations %q: want %s (pointer) with %d views and p75 %s", starters, st.Target, visits, uiNumber(st.Value, "ms"))
			}
		}
		tb.screenshot(shots, "real-users-soft-starts")
		tb.view("#/w/" + w.ID + "/rum?vital=inp&navigation=soft&days=7")
		if attr := tb.text("#rum-attributions"); !strings.Contains(attr, "#work-cart") || !strings.Contains(attr, "Not shown with these filters: script attributions filter by group+device only") {
			t.Errorf("the soft views' INP attributions %q: want the targets, and the scripts said left out", attr)
		}
	})

	t.Run("page view", func(t *testing.T) {
		tb.t = t
		tb.view("#/w/" + w.ID + "/page/" + pages[0].ID + "?device=mobile&days=7")
		rum := tb.text("#page-rum")
		if !strings.Contains(rum, fmt.Sprint(visits)+"\nsoft navigations") || !strings.Contains(rum, "0\npage loads") {
			t.Errorf("the cart's real users %q: want its %d soft views and no page load", rum, visits)
		}
		tb.screenshot(shots, "page-real-users-soft")
	})
}
