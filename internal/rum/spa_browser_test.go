package rum_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

// spaRouter is the client-side router of the fixture app, from the package layers/spa pins
// (make deps installs it).
const spaRouter = "../../layers/spa/node_modules/navigo/lib/navigo.min.js"

// spaSite serves the single-page app of testdata/spa: every path the router knows gets the
// app's document (Cache-Control: no-store, which keeps it out of the back/forward cache, so
// that going back to it is a load with a reason), plus a document to leave it for, a page
// launching a prerender by speculation rules and the prerendered page.
func spaSite(t *testing.T, svc *rumService) (base string, site model.Website) {
	router, err := os.ReadFile(spaRouter)
	if err != nil {
		t.Fatalf("the router (make deps installs layers/spa): %v", err)
	}
	file := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "spa", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	index, app, away, launch, pre := file("index.html"), file("app.js"), file("away.html"), file("launch.html"), file("pre.html")
	var snippet string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		html := func(body string) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(strings.ReplaceAll(body, "{{SNIPPET}}", snippet)))
		}
		switch r.URL.Path {
		case "/navigo.js", "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(map[string][]byte{"/navigo.js": router, "/app.js": []byte(app)}[r.URL.Path])
		case "/away.html":
			html(away)
		case "/launch.html":
			html(launch)
		case "/pre.html":
			html(pre)
		default:
			w.Header().Set("Cache-Control", "no-store")
			html(index)
		}
	}))
	t.Cleanup(srv.Close)
	site = model.Website{Account: "acme", Domain: strings.TrimPrefix(srv.URL, "http://"), DisplayName: "spa"}
	ctx := context.Background()
	if err := svc.store.CreateWebsite(ctx, &site); err != nil {
		t.Fatal(err)
	}
	snippet = svc.server.URL + "/rum/" + site.ID + ".js"
	set, err := rum.ApplySettings(model.RUMSettings{}, model.RUMSettings{Groups: []model.PageGroup{{Name: "product pages", Pattern: "/product/*"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.store.PutRUMSettings(ctx, site.Account, site.ID, set); err != nil {
		t.Fatal(err)
	}
	return srv.URL, site
}

// sentView is a view as the snippet sent it.
type sentView struct {
	ID  string             `json:"i"`
	URL string             `json:"u"`
	M   map[string]float64 `json:"m"`
	S   struct {
		N string   `json:"n"`
		B []string `json:"b"`
	} `json:"s"`
	A struct {
		LCP *struct {
			E string `json:"e"`
		} `json:"lcp"`
		INP *struct {
			E string `json:"e"`
		} `json:"inp"`
		Nav *struct {
			E string `json:"e"`
			T string `json:"t"`
		} `json:"nav"`
	} `json:"a"`
}

// A real Chromium visits a single-page app routed by a real router (navigo): it loads the
// landing route, works and clicks through three routes (soft navigations), leaves for another
// document and goes back (the app's document is not restored from the back/forward cache:
// no-store), then opens a page prerendered by speculation rules. The beacons carry one hard
// view and three soft views of the first visit, each with its own URL, LCP element and INP
// target; the back navigation's view with the cache's reason; the prerendered view as
// prerendered. Through collect and the aggregator, the reports count each route, the product
// route in its page group, the navigation types, and the reason.
func TestSoftNavigationsFromRealChromium(t *testing.T) {
	svc := newRUMService(t)
	base, site := spaSite(t, svc)
	pages := []model.Page{{URL: "/"}, {URL: "/products"}, {URL: "/product/123"}, {URL: "/about"}}
	if err := svc.store.CreatePages(context.Background(), site, pages); err != nil {
		t.Fatal(err)
	}
	// Without rod's default device emulation: Chromium prerenders nothing while DevTools
	// overrides the user agent or the screen (PrerenderingDisabledByDevTools).
	b := realUserBrowser(t).NoDefaultDevice()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	page, err := b.Context(ctx).Page(proto.TargetCreateTarget{URL: "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	if err := page.Navigate(base + "/"); err != nil {
		t.Fatal(err)
	}
	if err := page.WaitLoad(); err != nil {
		t.Fatal(err)
	}
	if err := page.Timeout(20 * time.Second).Wait(rod.Eval(`() => !!(window.webVitals && window.openvitals && !Array.isArray(window.openvitals))`)); err != nil {
		t.Fatalf("the snippet did not load: %v", err)
	}
	click := func(selector string) {
		t.Helper()
		el, err := page.Timeout(10 * time.Second).Element(selector)
		if err != nil {
			t.Fatalf("%s: %v", selector, err)
		}
		if err := el.Click(proto.InputMouseButtonLeft, 1); err != nil {
			t.Fatalf("click %s: %v", selector, err)
		}
	}
	// Each route: wait for its heading to paint, work (a 150 ms handler), wait for web-vitals
	// to process the interaction (an idle callback, up to 1 s), then follow the next link.
	for _, step := range []struct{ route, next string }{
		{"home", "#to-products"}, {"products", "#to-product"}, {"product", "#to-about"}, {"about", "#to-away"},
	} {
		if _, err := page.Timeout(10 * time.Second).Element("#lcp-" + step.route); err != nil {
			t.Fatalf("route %s: %v", step.route, err)
		}
		time.Sleep(300 * time.Millisecond)
		click("#work-" + step.route)
		time.Sleep(1200 * time.Millisecond)
		click(step.next)
	}
	if _, err := page.Timeout(10 * time.Second).Element("#away"); err != nil {
		t.Fatalf("the away document: %v", err)
	}
	// Back: the app's document loads again (no-store) at the route it was left on.
	if err := page.NavigateBack(); err != nil {
		t.Fatal(err)
	}
	if _, err := page.Timeout(10 * time.Second).Element("#lcp-about"); err != nil {
		t.Fatalf("back to the app: %v", err)
	}
	if err := page.Timeout(20 * time.Second).Wait(rod.Eval(`() => !!(window.webVitals && window.openvitals && !Array.isArray(window.openvitals))`)); err != nil {
		t.Fatalf("the snippet did not load again: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	click("#work-about") // a first input reports the LCP
	time.Sleep(1200 * time.Millisecond)
	if err := page.Navigate("about:blank"); err != nil {
		t.Fatal(err)
	}
	// A page launching a prerender by speculation rules, then following its link: the
	// prerendered page is activated. Chromium prerenders nothing for a page DevTools is
	// attached to (PrerenderingDisabledByDevTools), so the page is a target of its own, opened
	// without a session, which the test attaches to once the prerendered page is shown.
	target, err := proto.TargetCreateTarget{URL: base + "/launch.html"}.Call(b)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	prePage, err := b.PageFromTarget(target.TargetID)
	if err != nil {
		t.Fatal(err)
	}
	prePage = prePage.Context(ctx)
	if _, err := prePage.Timeout(10 * time.Second).Element("#lcp-pre"); err != nil {
		t.Fatalf("the prerendered page: %v", err)
	}
	activation, err := prePage.Eval(`() => performance.getEntriesByType("navigation")[0].activationStart`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prerendered page's activationStart: %v", activation.Value)
	if err := prePage.Navigate("about:blank"); err != nil {
		t.Fatal(err)
	}
	if err := page.Navigate("about:blank"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	var views []sentView
	for time.Now().Before(deadline) {
		views = views[:0]
		svc.mu.Lock()
		for _, body := range svc.beacons {
			var beacon struct {
				V []sentView `json:"v"`
			}
			if err := json.Unmarshal(body, &beacon); err != nil {
				svc.mu.Unlock()
				t.Fatalf("beacon %s: %v", body, err)
			}
			views = append(views, beacon.V...)
		}
		svc.mu.Unlock()
		if len(views) >= 6 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	svc.mu.Lock()
	for i, body := range svc.beacons {
		t.Logf("beacon %d (%d): %s", i, svc.statuses[i], body)
	}
	svc.mu.Unlock()
	if len(views) != 6 {
		t.Fatalf("%d views sent, want 6", len(views))
	}
	svc.mu.Lock()
	if len(svc.beacons) != 3 {
		t.Errorf("%d beacons, want one per page lifecycle (3)", len(svc.beacons))
	}
	svc.mu.Unlock()
	ids := map[string]bool{}
	for _, v := range views {
		if _, ok := rum.ParseViewID(v.ID); !ok || ids[v.ID] {
			t.Errorf("view %s: its ID %q is not a view ID of its own", v.URL, v.ID)
		}
		ids[v.ID] = true
	}
	// The visit: the hard load and three soft navigations, each with its own URL, LCP element
	// and INP target.
	for i, want := range []struct{ path, nav, route, link string }{
		{"/", "navigate", "home", ""}, {"/products", "soft", "products", "#to-products"}, {"/product/123", "soft", "product", "#to-product"}, {"/about", "soft", "about", "#to-about"},
	} {
		v := views[i]
		// A soft navigation names the click that started it; the hard load has none.
		if (v.A.Nav == nil) != (want.link == "") || (v.A.Nav != nil && (v.A.Nav.E != want.link || v.A.Nav.T != "pointer")) {
			t.Errorf("view %d (%s): started by %+v, want %q (pointer)", i, want.path, v.A.Nav, want.link)
		}
		if v.URL != base+want.path || v.S.N != want.nav {
			t.Errorf("view %d: %s %s, want %s %s", i, v.URL, v.S.N, want.path, want.nav)
		}
		if v.A.LCP == nil || v.A.LCP.E != "#lcp-"+want.route {
			t.Errorf("view %d (%s): LCP element %+v, want #lcp-%s", i, want.path, v.A.LCP, want.route)
		}
		if v.A.INP == nil || v.A.INP.E != "#work-"+want.route || v.M["inp"] < 150 {
			t.Errorf("view %d (%s): INP %v target %+v, want #work-%s", i, want.path, v.M["inp"], v.A.INP, want.route)
		}
		if _, ok := v.M["dns_time"]; ok != (want.nav == "navigate") {
			t.Errorf("view %d (%s): Navigation Timing %v: the hard load's only", i, want.path, v.M)
		}
		if _, ok := v.M["ttfb"]; ok != (want.nav == "navigate") {
			t.Errorf("view %d (%s): ttfb %v: a soft navigation has none", i, want.path, v.M)
		}
	}
	back, pre := views[4], views[5]
	if back.URL != base+"/about" || back.S.N != "back-forward" || len(back.S.B) == 0 || back.S.B[0] != "response-cache-control-no-store" {
		t.Errorf("the back navigation: %s %s reasons %v, want /about back-forward, not restored for response-cache-control-no-store", back.URL, back.S.N, back.S.B)
	}
	if pre.URL != base+"/pre.html" || pre.S.N != "prerender" {
		t.Errorf("the prerendered page: %s %s", pre.URL, pre.S.N)
	}

	// The reports.
	svc.fold(6)
	day := time.Now().UTC().Format("20060102")
	date := "&date=" + day + "-" + day
	var byPage struct {
		Result struct {
			List map[string]map[string]float64 `json:"list"`
		} `json:"result"`
	}
	svc.get("/"+site.ID+"/field-testing/pages?timing=lcp+inp"+date, &byPage)
	for path, n := range map[string]float64{"/": 1, "/products": 1, "/product/123": 1, "/about": 2, "/pre.html": 1} {
		if got := byPage.Result.List[path]["count"]; got != n {
			t.Errorf("pages report: %s counted %v, want %v (%v)", path, got, n, byPage.Result.List)
		}
	}
	type segments struct {
		Result struct {
			List []struct {
				Key   string `json:"key"`
				Views uint64 `json:"views"`
			} `json:"list"`
		} `json:"result"`
	}
	counts := func(path string) map[string]uint64 {
		var seg segments
		svc.get(path, &seg)
		out := map[string]uint64{}
		for _, r := range seg.Result.List {
			out[r.Key] = r.Views
		}
		return out
	}
	if got := counts("/" + site.ID + "/field-testing/segments?metric=lcp&by=navigation" + date); got["navigate"] != 1 || got["soft"] != 3 || got["back-forward"] != 1 || got["prerender"] != 1 || len(got) != 4 {
		t.Errorf("views by navigation: %v, want navigate 1, soft 3, back-forward 1, prerender 1", got)
	}
	if got := counts("/" + site.ID + "/field-testing/segments?metric=lcp&by=group&navigation=soft" + date); got["product pages"] != 1 {
		t.Errorf("soft views by group: %v, want /product/123 in product pages", got)
	}
	if got := counts("/" + site.ID + "/field-testing/segments?metric=lcp&by=navigation&page=" + pages[3].ID + date); got["soft"] != 1 || got["back-forward"] != 1 {
		t.Errorf("/about's views by navigation: %v, want one soft and one back-forward", got)
	}
	type attributions struct {
		Result struct {
			Elements []struct {
				Element string `json:"element"`
			} `json:"elements"`
			Targets []struct {
				Target string `json:"target"`
			} `json:"targets"`
			Reasons []struct {
				Reason string `json:"reason"`
				Views  uint64 `json:"views"`
			} `json:"notRestoredReasons"`
		} `json:"result"`
	}
	for i, route := range []string{"home", "products", "product", "about"} {
		var lcp, inp attributions
		svc.get("/"+site.ID+"/field-testing/attributions?metric=lcp&page="+pages[i].ID+date, &lcp)
		svc.get("/"+site.ID+"/field-testing/attributions?metric=inp&page="+pages[i].ID+date, &inp)
		if len(lcp.Result.Elements) == 0 || lcp.Result.Elements[0].Element != "#lcp-"+route {
			t.Errorf("%s: LCP elements %+v, want #lcp-%s", pages[i].URL, lcp.Result.Elements, route)
		}
		if len(inp.Result.Targets) == 0 || inp.Result.Targets[0].Target != "#work-"+route {
			t.Errorf("%s: INP targets %+v, want #work-%s", pages[i].URL, inp.Result.Targets, route)
		}
	}
	// Site-wide, by navigation: the soft views' LCP elements apart from the page load's, and the
	// links that started the soft navigations with the LCP of their routes.
	var softLCP struct {
		Result struct {
			Elements []struct {
				Element string `json:"element"`
			} `json:"elements"`
			Starts []struct {
				Target string `json:"target"`
				Type   string `json:"type"`
				Views  uint64 `json:"views"`
			} `json:"softNavigationStarts"`
			LeftOut map[string]string `json:"leftOut"`
		} `json:"result"`
	}
	svc.get("/"+site.ID+"/field-testing/attributions?metric=lcp&navigation=soft"+date, &softLCP)
	elements := map[string]bool{}
	for _, e := range softLCP.Result.Elements {
		elements[e.Element] = true
	}
	if len(elements) != 3 || !elements["#lcp-products"] || !elements["#lcp-product"] || !elements["#lcp-about"] {
		t.Errorf("soft views' LCP elements: %+v, want the three routes' and not the page load's", softLCP.Result.Elements)
	}
	starts := map[string]bool{}
	for _, st := range softLCP.Result.Starts {
		starts[st.Target+" "+st.Type] = st.Views == 1
	}
	if len(starts) != 3 || !starts["#to-products pointer"] || !starts["#to-product pointer"] || !starts["#to-about pointer"] {
		t.Errorf("soft navigations started by %+v, want the three links, once each", softLCP.Result.Starts)
	}
	var reasons attributions
	svc.get("/"+site.ID+"/field-testing/attributions?metric=ttfb"+date, &reasons)
	found := false
	for _, r := range reasons.Result.Reasons {
		found = found || (r.Reason == "response-cache-control-no-store" && r.Views == 1)
	}
	if !found {
		t.Errorf("the back/forward cache's reasons: %+v, want response-cache-control-no-store once", reasons.Result.Reasons)
	}
}
