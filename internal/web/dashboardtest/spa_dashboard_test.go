package dashboardtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/browsertest"
	"github.com/openvitals/openvitals/internal/testing/localtest"
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
	siteID, pages := d.website(t, "spa.example", "SPA shop", `{"groups":[{"name":"Products","pattern":"/product/*"}]}`, `[{"url":"/cart","alias":"Cart"}]`)
	W := "/" + siteID

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
		body := fmt.Sprintf(`{"w":%q,"c":{},"v":[%s]}`, siteID, strings.Join(views, ","))
		d.beacon(t, body, realUserAgents[0])
	}
	seg := d.waitForViews(t, W+"/field-testing/segments?metric=lcp&by=navigation", hard+soft)
	var softP75 float64
	for _, r := range seg.Result.List {
		if r.Key == "soft" {
			softP75 = r.Value
		}
	}

	b := launchBrowser(t)
	tb := d.signedIn(t, b, localtest.ViewerKey)

	t.Run("real-user view", func(t *testing.T) {
		tb.t = t
		tb.view("#/w/" + siteID + "/rum?vital=lcp&seg=navigation&days=7")
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
		tb.view("#/w/" + siteID + "/rum?vital=lcp&group=Products&days=7")
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
		d.Call(t, "GET", W+"/field-testing/attributions?metric=lcp&navigation=soft", localtest.ViewerKey, "", 200, &starts)
		tb.view("#/w/" + siteID + "/rum?vital=lcp&navigation=soft&days=7")
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
		tb.view("#/w/" + siteID + "/rum?vital=inp&navigation=soft&days=7")
		if attr := tb.text("#rum-attributions"); !strings.Contains(attr, "#work-cart") || !strings.Contains(attr, "Not shown with these filters: script attributions filter by group+device only") {
			t.Errorf("the soft views' INP attributions %q: want the targets, and the scripts said left out", attr)
		}
	})

	t.Run("page view", func(t *testing.T) {
		tb.t = t
		tb.view("#/w/" + siteID + "/page/" + pages[0].ID + "?device=mobile&days=7")
		rum := tb.text("#page-rum")
		if !strings.Contains(rum, fmt.Sprint(visits)+"\nsoft navigations") || !strings.Contains(rum, "0\npage loads") {
			t.Errorf("the cart's real users %q: want its %d soft views and no page load", rum, visits)
		}
		tb.screenshot(shots, "page-real-users-soft")
	})
}

// TestDashboardJourneyRoutes plays a multistep journey through the single-page app the
// real-user tests load (navigo routing three links) in the local service's own worker and
// Chromium, and shows the run's routes in the test's view: each with its lab LCP and element,
// CLS, INP and target as the API gives them, and a link to the same route's real users (the
// monitored page /about, the page group of /product/123). It writes the view's screenshot.
func TestDashboardJourneyRoutes(t *testing.T) {
	d := startService(t, 1, false)
	shots := screenshotDir(t)
	spa := browsertest.SPAServer(t)
	siteID, pages := d.website(t, strings.TrimPrefix(spa, "http://"), "SPA shop", `{"groups":[{"name":"Products","pattern":"/product/*"}]}`, `[{"url":"/about","alias":"About"}]`)
	W := "/" + siteID
	steps := []string{`{"type":"navigate","target":"/"}`, `{"type":"waitForSelector","target":"#lcp-home"}`}
	for _, route := range []string{"products", "product", "about"} {
		steps = append(steps, fmt.Sprintf(`{"type":"click","target":"#to-%s"}`, route), fmt.Sprintf(`{"type":"waitForSelector","target":"#lcp-%s"}`, route),
			`{"type":"wait","value":"300"}`, fmt.Sprintf(`{"type":"click","target":"#work-%s"}`, route), `{"type":"wait","value":"300"}`)
	}
	var test struct{ ID string }
	d.Call(t, "POST", W+"/multistep", localtest.AdminKey, `{"alias":"Through the shop","device":"desktop","steps":[`+strings.Join(steps, ",")+`]}`, 201, &test)
	d.Call(t, "POST", W+"/multistep/"+test.ID+"/runs", localtest.AdminKey, "", 201, nil)
	type route struct {
		Step       int
		URL        string
		LCP        *float64
		LCPElement string
		INP        *float64
		INPTarget  string
		Field      *struct {
			Path  string
			Pages []string
			Group string
		}
	}
	var runs struct {
		Result struct {
			List []struct {
				Status, Error   string
				SoftNavigations []route
			}
		}
	}
	d.WaitFor(t, "the run", func() bool {
		d.Call(t, "GET", W+"/multistep/"+test.ID+"/runs", localtest.ViewerKey, "", 200, &runs)
		return len(runs.Result.List) == 1 && (runs.Result.List[0].Status == "completed" || runs.Result.List[0].Status == "failed")
	})
	run := runs.Result.List[0]
	if run.Status != "completed" || len(run.SoftNavigations) != 3 {
		t.Fatalf("the run: %s %s with %d routes, want completed with 3", run.Status, run.Error, len(run.SoftNavigations))
	}
	for i, r := range run.SoftNavigations {
		t.Logf("route %d: %+v field %+v", i, r, r.Field)
	}
	if f := run.SoftNavigations[1].Field; f == nil || f.Group != "Products" || f.Path != "/product/123" {
		t.Errorf("/product/123's field: %+v, want the group Products", f)
	}
	if f := run.SoftNavigations[2].Field; f == nil || len(f.Pages) != 1 || f.Pages[0] != pages[0].ID {
		t.Errorf("/about's field: %+v, want the page %s", f, pages[0].ID)
	}

	b := launchBrowser(t)
	tb := d.signedIn(t, b, localtest.ViewerKey)
	tb.view("#/w/" + siteID + "/multistep/" + test.ID)
	routes := tb.text("#run-routes")
	for i, name := range []string{"products", "product", "about"} {
		r := run.SoftNavigations[i]
		want := []string{fmt.Sprintf("%d (click #to-%s)", r.Step+1, name), "#lcp-" + name, "#work-" + name}
		if r.LCP != nil {
			want = append(want, uiNumber(*r.LCP, "ms"))
		}
		for _, s := range want {
			if !strings.Contains(routes, s) {
				t.Errorf("the routes %q: no %q", routes, s)
			}
		}
	}
	for _, s := range []string{"group Products", "page /about"} {
		if !strings.Contains(routes, s) {
			t.Errorf("the routes %q: no link %q to the real users", routes, s)
		}
	}
	if href := tb.eval(`() => document.querySelector('#run-routes a[href*="/page/"]').getAttribute('href')`); !strings.Contains(fmt.Sprint(href), "/page/"+pages[0].ID) {
		t.Errorf("/about's link %v, want its page view", href)
	}
	tb.screenshot(shots, "multistep-routes")
}
