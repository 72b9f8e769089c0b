package dashboardtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"image/png"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/input"
	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/local"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/localtest"
)

// dashboard is the local service, as make run starts it, with an admin and a viewer key of the
// account acme and, started as make demo starts it, the demo website and its pages.
type dashboard struct {
	*localtest.Service
	site  model.Website // the demo website
	pages []model.Page
}

// startDemo starts the service as make demo does and waits for the demo website (real audits:
// a minute or two).
func startDemo(t testing.TB, auditRuns int) *dashboard {
	t.Helper()
	d := startService(t, auditRuns, true)
	d.WaitFor(t, "the demo website", func() bool { return local.DemoWebsite(d.Data) != "" })
	var err error
	if d.site, err = d.Store.Website(context.Background(), "acme", local.DemoWebsite(d.Data)); err != nil {
		t.Fatal(err)
	}
	if d.pages, err = d.Store.Pages(context.Background(), d.site); err != nil || len(d.pages) != 2 {
		t.Fatalf("demo pages %v, %v", d.pages, err)
	}
	return d
}

// startService starts the local service (localtest.Start): with demo, as make demo starts it.
func startService(t testing.TB, auditRuns int, demo bool) *dashboard {
	t.Helper()
	return &dashboard{Service: localtest.Start(t, auditRuns, demo)}
}

// addedPage is a page as the API answers its addition.
type addedPage struct{ ID, URL string }

// website makes a website of acme through the API, as an admin does: its page groups (the
// field-testing settings' JSON, unless ""), then its pages (their JSON list). It returns the
// website's ID and its pages with their IDs.
func (d *dashboard) website(t testing.TB, domain, displayName, groups, pages string) (string, []addedPage) {
	t.Helper()
	var w struct{ ID string }
	d.Call(t, "POST", "/account/websites", localtest.AdminKey, fmt.Sprintf(`{"domain":%q,"displayName":%q}`, domain, displayName), 201, &w)
	if groups != "" {
		d.Call(t, "PUT", "/"+w.ID+"/field-testing/settings", localtest.AdminKey, groups, 200, nil)
	}
	var added []addedPage
	d.Call(t, "POST", "/"+w.ID+"/settings/pages", localtest.AdminKey, pages, 200, &added)
	return w.ID, added
}

// shop stores a website of acme, shop.example, with its home page and its cart.
func (d *dashboard) shop(t testing.TB) (site model.Website, home, cart model.Page) {
	t.Helper()
	pages := []model.Page{{URL: "/", Alias: "Home"}, {URL: "/cart", Alias: "Cart"}}
	site, _ = awstest.Website(t, d.Store, model.Website{Account: "acme", Domain: "shop.example", DisplayName: "Shop"}, pages)
	return site, pages[0], pages[1]
}

// beacon posts a beacon as the snippet does (text/plain, as navigator.sendBeacon sends it)
// from a browser of userAgent; the service must accept it.
func (d *dashboard) beacon(t testing.TB, body, userAgent string) {
	t.Helper()
	c := apitest.Client{Base: d.Base}
	req := c.NewRequest(t, "POST", "/collect", body)
	req.Header.Set("Content-Type", "text/plain")
	req.Header.Set("User-Agent", userAgent)
	c.Do(t, req).Want(t, http.StatusAccepted)
}

// pageRow is a row of the pages list.
type pageRow struct {
	ID, Alias, URL, Device string
	Latest                 map[string]float64
	Timeline               []map[string]any
}

func (d *dashboard) pageRows(t testing.TB) []pageRow {
	var out struct{ Result struct{ List []pageRow } }
	d.Call(t, "GET", "/"+d.site.ID+"/pages", localtest.ViewerKey, "", 200, &out)
	return out.Result.List
}

func (d *dashboard) waitForAudits(t testing.TB, rows int) {
	t.Helper()
	d.WaitFor(t, fmt.Sprintf("%d pages and devices audited", rows), func() bool {
		done := 0
		for _, r := range d.pageRows(t) {
			if r.Latest != nil {
				done++
			}
		}
		return done == rows
	})
}

// checkDemo checks, through the API, that the demo website holds all it is said to: pages
// audited on both devices with weeks of history, user-experience records, real users' page
// views, budgets, a passing and a failing multistep test, a test series, events, and the
// deploy's regressions (LCP on mobile) with their cause and the deploy's annotation.
func (d *dashboard) checkDemo(t *testing.T) {
	W := "/" + d.site.ID
	rows := d.pageRows(t)
	if len(rows) != 4 {
		t.Errorf("%d page rows, want 2 pages on 2 devices", len(rows))
	}
	for _, r := range rows {
		if r.Latest["performance_score"] == 0 || r.Latest["lcp"] == 0 {
			t.Errorf("%s %s: latest %v, want an audit's", r.URL, r.Device, r.Latest)
		}
		var tl struct{ Result []map[string]any }
		d.Call(t, "GET", W+"/pages/"+r.ID+"/timeline?device="+r.Device, localtest.ViewerKey, "", 200, &tl)
		if len(tl.Result) < local.DemoHistoryDays+1 {
			t.Errorf("%s %s: a timeline of %d days, want %d", r.URL, r.Device, len(tl.Result), local.DemoHistoryDays+1)
		}
		var detail struct{ LatestUx map[string]any }
		d.Call(t, "GET", W+"/pages/"+r.ID+"?device="+r.Device, localtest.ViewerKey, "", 200, &detail)
		if detail.LatestUx["lcp"] == nil {
			t.Errorf("%s %s: no user-experience record (latestUx %v)", r.URL, r.Device, detail.LatestUx)
		}
	}
	d.checkDemoUsers(t)
	var budgets struct{ Result struct{ List []any } }
	d.Call(t, "GET", W+"/budgets", localtest.ViewerKey, "", 200, &budgets)
	if len(budgets.Result.List) != 3 {
		t.Errorf("%d budgets, want 3", len(budgets.Result.List))
	}
	var tests struct {
		Result struct{ List []struct{ ID, Alias string } }
	}
	d.Call(t, "GET", W+"/multistep", localtest.ViewerKey, "", 200, &tests)
	statuses := map[string]string{}
	for _, tt := range tests.Result.List {
		var runs struct {
			Result struct{ List []struct{ Status string } }
		}
		d.Call(t, "GET", W+"/multistep/"+tt.ID+"/runs", localtest.ViewerKey, "", 200, &runs)
		if len(runs.Result.List) > 0 {
			statuses[tt.Alias] = runs.Result.List[0].Status
		}
	}
	if statuses["Browse"] != "completed" || statuses["Checkout"] != "failed" {
		t.Errorf("multistep runs %v, want Browse completed and Checkout failed (its button was renamed)", statuses)
	}
	var series struct {
		Result struct{ List []struct{ Status string } }
	}
	d.Call(t, "GET", W+"/testseries", localtest.ViewerKey, "", 200, &series)
	if l := series.Result.List; len(l) != 1 || l[0].Status != "completed" {
		t.Errorf("test series %+v, want one completed", l)
	}
	var evs struct {
		Result struct{ List []struct{ Type string } }
	}
	d.Call(t, "GET", W+"/events", localtest.ViewerKey, "", 200, &evs)
	types := map[string]bool{}
	for _, e := range evs.Result.List {
		types[e.Type] = true
	}
	if !types["regression.detected"] || len(types) < 2 {
		t.Errorf("event types %v, want the regression's and others", types)
	}
	var regs struct {
		Result struct {
			List []struct {
				Metric, Device, Page, FirstBadDay string
				Cause                             struct {
					Changes     []struct{ Kind, URL string }
					Annotations []struct{ Text string }
				}
			}
		}
	}
	d.Call(t, "GET", W+"/regressions?kind=regression", localtest.ViewerKey, "", 200, &regs)
	// On mobile the deploy's heavier hero is an LCP regression of seconds; on desktop's
	// faster network its few hundred ms may sit within a single run's noise on a loaded
	// machine (and some desktop runs here name the text, not the hero, as the LCP element),
	// but the bytes it added never do.
	found := map[string]bool{}
	deployDay := time.Now().UTC().AddDate(0, 0, -local.DemoDeployedDaysAgo).Format("2006-01-02")
	for _, g := range regs.Result.List {
		c := g.Cause
		hero := len(c.Changes) > 0 && strings.HasSuffix(c.Changes[0].URL, "/hero.png") &&
			(c.Changes[0].Kind == "lcp_resource" || g.Device == "desktop" && c.Changes[0].Kind == "resource_grew")
		if (g.Device == "desktop" || g.Metric == "lcp") && g.FirstBadDay == deployDay && hero && len(c.Annotations) == 1 && strings.Contains(c.Annotations[0].Text, "v2.4") {
			found[g.Device] = true
		}
	}
	if !found["desktop"] || !found["mobile"] {
		t.Errorf("regressions %+v, want the home page's LCP on mobile and a regression on desktop from %s, caused by the hero image first, with the deploy's annotation", regs.Result.List, deployDay)
	}
}

// ---- the browser ------------------------------------------------------------------------

// screenshotDir is where the views' screenshots go: OPENVITALS_SCREENSHOTS (make screenshots
// sets docs/screenshots), else the test's temporary directory.
func screenshotDir(t testing.TB) string {
	if dir := os.Getenv("OPENVITALS_SCREENSHOTS"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	return t.TempDir()
}

func launchBrowser(t testing.TB) *rod.Browser {
	t.Helper()
	bin, err := browser.LookBin()
	if err != nil {
		t.Fatal(err)
	}
	s, err := browser.Launch(context.Background(), browser.Options{Bin: bin, Guard: browser.Guard{AllowPrivate: true}, Log: awstest.Log(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s.Browser()
}

// tab is one browser tab on the dashboard, failing the test on any script error.
type tab struct {
	t    testing.TB
	page *rod.Page
	base string
	errs chan string
}

func (d *dashboard) open(t testing.TB, b *rod.Browser) *tab {
	t.Helper()
	p, err := b.Page(proto.TargetCreateTarget{URL: "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := (proto.EmulationSetDeviceMetricsOverride{Width: 1280, Height: 900, DeviceScaleFactor: 1}).Call(p); err != nil {
		t.Fatal(err)
	}
	tb := &tab{t: t, page: p, base: d.Base, errs: make(chan string, 16)}
	go p.EachEvent(func(e *proto.RuntimeExceptionThrown) {
		select {
		case tb.errs <- e.ExceptionDetails.Exception.Description:
		default:
		}
	})()
	return tb
}

// signedIn opens a tab on the dashboard and signs in with key, waiting for the first view.
func (d *dashboard) signedIn(t testing.TB, b *rod.Browser, key string) *tab {
	t.Helper()
	tb := d.open(t, b)
	tb.goTo("")
	tb.signIn(key)
	tb.waitSignedIn()
	return tb
}

// checkNoErrors fails the test on any uncaught script error so far.
func (tb *tab) checkNoErrors() {
	tb.t.Helper()
	select {
	case e := <-tb.errs:
		tb.t.Fatalf("script error: %s", e)
	default:
	}
}

func (tb *tab) goTo(hash string) {
	tb.t.Helper()
	if err := tb.page.Navigate(tb.base + "/app/" + hash); err != nil {
		tb.t.Fatal(err)
	}
	if err := tb.page.WaitLoad(); err != nil {
		tb.t.Fatal(err)
	}
}

// view goes to a view by its hash and waits until it is drawn: its main holds text and is not
// busy.
func (tb *tab) view(hash string) {
	tb.t.Helper()
	if _, err := tb.page.Eval(`h => { location.hash = h }`, hash); err != nil {
		tb.t.Fatal(err)
	}
	tb.waitIdle()
	tb.checkNoRawIDs(hash)
}

func (tb *tab) waitIdle() {
	tb.t.Helper()
	err := tb.page.Timeout(30 * time.Second).Wait(rod.Eval(`() => !document.getElementById('main').hasAttribute('aria-busy') && document.querySelector('#main h1') !== null`))
	if err != nil {
		tb.t.Fatalf("view not drawn: %v", err)
	}
	tb.checkNoErrors()
}

// text returns the text of the first element matching selector.
func (tb *tab) text(selector string) string {
	tb.t.Helper()
	el, err := tb.page.Timeout(15 * time.Second).Element(selector)
	if err != nil {
		tb.t.Fatalf("%s: %v", selector, err)
	}
	s, err := el.Text()
	if err != nil {
		tb.t.Fatal(err)
	}
	return s
}

// has tells whether an element matches selector now.
func (tb *tab) has(selector string) bool {
	tb.t.Helper()
	ok, _, err := tb.page.Has(selector)
	if err != nil {
		tb.t.Fatal(err)
	}
	return ok
}

func (tb *tab) eval(js string, args ...any) any {
	tb.t.Helper()
	res, err := tb.page.Eval(js, args...)
	if err != nil {
		tb.t.Fatal(err)
	}
	return res.Value.Val()
}

func (tb *tab) signIn(key string) {
	tb.t.Helper()
	el, err := tb.page.Timeout(15 * time.Second).Element("#key")
	if err != nil {
		tb.t.Fatal(err)
	}
	if err := el.Input(key); err != nil {
		tb.t.Fatal(err)
	}
	if err := el.Type('\r'); err != nil {
		tb.t.Fatal(err)
	}
}

// fill types text into the element selector matches.
func (tb *tab) fill(selector, text string) {
	tb.t.Helper()
	el, err := tb.page.Timeout(15 * time.Second).Element(selector)
	if err != nil {
		tb.t.Fatalf("%s: %v", selector, err)
	}
	if err := el.Input(text); err != nil {
		tb.t.Fatal(err)
	}
}

// click clicks the element of the selector whose text matches the regular expression text.
func (tb *tab) click(selector, text string) {
	tb.t.Helper()
	el, err := tb.page.Timeout(15*time.Second).ElementR(selector, text)
	if err != nil {
		tb.t.Fatalf("%s %q: %v", selector, text, err)
	}
	if err := el.Click(proto.InputMouseButtonLeft, 1); err != nil {
		tb.t.Fatal(err)
	}
}

// waitFor waits until the page condition js holds.
func (tb *tab) waitFor(what, js string) {
	tb.t.Helper()
	if err := tb.page.Timeout(15 * time.Second).Wait(rod.Eval(js)); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
	tb.checkNoErrors()
}

// waitSignedIn waits for the first view after signing in.
func (tb *tab) waitSignedIn() {
	tb.t.Helper()
	if _, err := tb.page.Timeout(15 * time.Second).Element("#role"); err != nil {
		tb.t.Fatalf("not signed in: %v", err)
	}
	tb.waitIdle()
}

func (tb *tab) screenshot(dir, name string) {
	tb.t.Helper()
	// Charts are drawn on the next frame after the view.
	time.Sleep(300 * time.Millisecond)
	png, err := tb.page.Screenshot(true, &proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng})
	if err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// checkDiagnostics checks the page view's diagnostics panel (mobile) against the API's: every
// frame shown from its image, the waterfall's bars and the table underneath one per request,
// the main document and the LCP's element named; it screenshots the panel alone.
func (tb *tab) checkDiagnostics(d *dashboard, pageID, shots string) {
	t := tb.t
	t.Helper()
	var api struct {
		Method      string
		Diagnostics struct {
			Filmstrip []struct{ URL string }
			Requests  []struct {
				URL string
				LCP bool
			}
			LCP *struct{ Selector, Label string }
		}
	}
	d.Call(t, "GET", "/"+d.site.ID+"/pages/"+pageID+"/diagnostics?device=mobile", localtest.ViewerKey, "", 200, &api)
	dg := api.Diagnostics
	if len(dg.Filmstrip) == 0 || len(dg.Requests) == 0 || dg.LCP == nil {
		t.Fatalf("the demo's diagnostics: %d frames, %d requests, LCP %v", len(dg.Filmstrip), len(dg.Requests), dg.LCP)
	}
	tb.waitFor("the diagnostics' frames", `() => {
		const imgs = [...document.querySelectorAll('#diagnostics .filmstrip img')];
		return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0 && i.src.startsWith('blob:'));
	}`)
	got := tb.eval(`() => [
		document.querySelectorAll('#diagnostics .filmstrip li').length,
		document.querySelectorAll('#diagnostics .wfall .wf-row').length,
		document.querySelectorAll('#diagnostics .wf-table tbody tr').length,
		document.querySelectorAll('#diagnostics .wfall .wf-row.doc').length,
		document.querySelector('#diagnostics .filmstrip li.marked') !== null,
		[...document.querySelectorAll('#diagnostics .wfall .wf-row .short')].every(s => s.textContent.trim() !== ''),
		document.querySelectorAll('#diagnostics .wfall .wf-row.lcp').length,
		[...document.querySelectorAll('#diagnostics .wfall .wf-line')].map(l => l.textContent.split(' ')[0]).join(','),
	]`).([]any)
	lcpRequests := 0
	for _, q := range dg.Requests {
		if q.LCP {
			lcpRequests++
		}
	}
	if int(got[0].(float64)) != len(dg.Filmstrip) || int(got[1].(float64)) != min(len(dg.Requests), 80) ||
		int(got[2].(float64)) != len(dg.Requests) || got[3].(float64) != 1 || got[4] != true || got[5] != true ||
		int(got[6].(float64)) != lcpRequests || got[7] != "FCP,LCP,Load" {
		t.Errorf("diagnostics panel: %v frames, labelled rows, table rows, documents, a marked frame, every row labelled, LCP rows, lines; the API has %d frames, %d requests, %d LCP resources",
			got, len(dg.Filmstrip), len(dg.Requests), lcpRequests)
	}
	// Simulated throttling says, above the pictures, that they are not the load the metrics
	// model; applied throttling has nothing to excuse.
	if note := tb.eval(`() => document.querySelector('#diagnostics .method-note') !== null`); note != (api.Method == "simulated") {
		t.Errorf("the simulated-throttling note shown: %v, for a result measured by %q", note, api.Method)
	}
	// A row's label shows the whole URL when focused.
	full := tb.eval(`() => {
		const l = document.querySelector('#diagnostics .wfall .wf-row .wf-label'); l.focus();
		const f = l.querySelector('.full');
		return [document.activeElement === l, getComputedStyle(f).display !== 'none', f.textContent];
	}`).([]any)
	if full[0] != true || full[1] != true || full[2] != dg.Requests[0].URL {
		t.Errorf("the first row's label focused: %v; want it focused, showing %s", full, dg.Requests[0].URL)
	}
	tb.eval(`() => document.activeElement.blur()`)
	if text := tb.text("#diagnostics"); !strings.Contains(text, dg.LCP.Selector) || !strings.Contains(text, "Time to first byte") {
		t.Errorf("the panel does not name the LCP element %q and its phases", dg.LCP.Selector)
	}
	// The requests' table opens by keyboard: its summary is focusable.
	if tb.eval(`() => { const s = document.querySelector('#diagnostics .wf-table summary'); s.focus(); return document.activeElement === s; }`) != true {
		t.Error("the requests' table cannot be reached by keyboard")
	}
	tb.eval(`() => document.activeElement.blur()`)
	// A window tall enough for the whole panel, for its screenshot only.
	if err := (proto.EmulationSetDeviceMetricsOverride{Width: 1280, Height: 2400, DeviceScaleFactor: 1}).Call(tb.page); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = (proto.EmulationSetDeviceMetricsOverride{Width: 1280, Height: 900, DeviceScaleFactor: 1}).Call(tb.page)
	}()
	panel, err := tb.page.Element("#diagnostics")
	if err != nil {
		t.Fatal(err)
	}
	if err := panel.ScrollIntoView(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	png, err := panel.Screenshot(proto.PageCaptureScreenshotFormatPng, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shots, "diagnostics.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	tb.narrow(shots, "diagnostics", "#diagnostics")
}

// blankCanvases counts the charts' canvases with no pixel drawn, after waiting for them.
func (tb *tab) chartCanvases() (total, blank int) {
	tb.t.Helper()
	if err := tb.page.Timeout(15 * time.Second).Wait(rod.Eval(`() => document.querySelectorAll('.plot canvas').length > 0`)); err != nil {
		tb.t.Fatalf("no chart drawn: %v", err)
	}
	time.Sleep(200 * time.Millisecond)
	res := tb.eval(`() => {
		const cs = [...document.querySelectorAll('.plot canvas')];
		const blank = cs.filter(c => {
			const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
			for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return false;
			return true;
		}).length;
		return [cs.length, blank];
	}`).([]any)
	return int(res[0].(float64)), int(res[1].(float64))
}

// inkShare is the share of a PNG's pixels that are not (nearly) white.
func inkShare(t testing.TB, b []byte) float64 {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	ink := 0
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if cr < 0xf000 || cg < 0xf000 || cb < 0xf000 {
				ink++
			}
		}
	}
	return float64(ink) / float64((r.Dx()/2+1)*(r.Dy()/2+1))
}

// uiNumber writes a value as the dashboard does: rounded with thousands separators, and its
// unit.
func uiNumber(v float64, unit string) string {
	if unit == "" {
		s := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.3f", v), "0"), ".")
		return s
	}
	n := int64(math.Round(v))
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if unit == "score" {
		return s
	}
	return s + " " + unit
}

// TestDashboard starts the service as make demo does and checks the demo website through the
// API, then drives the dashboard in Chromium over it: a wrong key, a viewer (every view, its
// numbers against the API's, charts drawn, no admin action) and an admin (the actions, a
// website added through the form, the Lighthouse report), and signing out. It writes the
// views' screenshots (see screenshotDir). Last, the service starts again over the same data
// and finds the demo website instead of seeding it again.
func TestDashboard(t *testing.T) {
	d := startDemo(t, 1)
	t.Run("demo", d.checkDemo)
	b := launchBrowser(t)
	shots := screenshotDir(t)
	W := "#/w/" + d.site.ID
	home := d.pages[0]
	if home.Alias != "Home" {
		home = d.pages[1]
	}

	t.Run("wrong key", func(t *testing.T) {
		tb := d.open(t, b)
		tb.goTo("")
		tb.signIn("ov_this_is_not_a_key_of_anyone")
		if err := tb.page.Timeout(15 * time.Second).Wait(rod.Eval(`() => document.getElementById('signin-error').textContent.includes('not accepted')`)); err != nil {
			t.Fatalf("no clear message for a wrong key: %q", tb.text("#signin-error"))
		}
		if k := tb.eval(`() => sessionStorage.getItem('openvitals.key')`); k != nil {
			t.Errorf("a refused key is kept: %v", k)
		}
		tb.screenshot(shots, "sign-in-refused")
	})

	t.Run("viewer", func(t *testing.T) {
		tb := d.open(t, b)
		tb.goTo("")
		tb.screenshot(shots, "sign-in")
		tb.signIn(localtest.ViewerKey)
		tb.waitSignedIn()
		if got := tb.text("#role"); got != "acme · viewer" {
			t.Errorf("role shown %q", got)
		}
		if k := tb.eval(`() => [sessionStorage.getItem('openvitals.key'), localStorage.length, location.href]`).([]any); k[0] != localtest.ViewerKey || k[1].(float64) != 0 || strings.Contains(k[2].(string), localtest.ViewerKey) {
			t.Errorf("key kept as %v: want it in sessionStorage only", k)
		}
		// Websites: the card's counts are the API's.
		var budgets struct {
			Result struct{ List []struct{ Status string } }
		}
		d.Call(t, "GET", "/"+d.site.ID+"/budgets", localtest.ViewerKey, "", 200, &budgets)
		exceeded := 0
		for _, bu := range budgets.Result.List {
			if bu.Status == "exceeded" {
				exceeded++
			}
		}
		card := tb.text("#site-" + d.site.ID + " ~ .stats")
		if !strings.Contains(card, "2\npages") || !strings.Contains(card, fmt.Sprintf("%d\nbudgets exceeded", exceeded)) {
			t.Errorf("website card %q: want 2 pages and %d budgets exceeded", card, exceeded)
		}
		if tb.has(`form[aria-label="Add a website"]`) {
			t.Error("a viewer is offered to add a website")
		}
		tb.screenshot(shots, "websites")

		// Website: the pages table holds the API's latest values.
		tb.view(W + "?device=mobile")
		var apiHome pageRow
		for _, r := range d.pageRows(t) {
			if r.ID == home.ID && r.Device == "mobile" {
				apiHome = r
			}
		}
		row := tb.eval(`id => [...document.querySelectorAll('tbody tr')].find(tr => tr.querySelector('a[href*="/page/' + id + '"]')).innerText`, home.ID).(string)
		for _, m := range []struct{ name, unit string }{{"performance_score", "score"}, {"lcp", "ms"}, {"tbt", "ms"}, {"cls", ""}} {
			if want := uiNumber(apiHome.Latest[m.name], m.unit); !strings.Contains(row, want) {
				t.Errorf("pages table row %q has no %s %s", row, m.name, want)
			}
		}
		if tb.has("#audit-now") {
			t.Error("a viewer is offered to audit now")
		}
		tb.checkPagesCSV(d, "mobile")
		if tb.has("#pages-table .columns") == false || !strings.Contains(tb.text("#pages-what"), "last 3 days") {
			t.Error("the pages table says neither what its values aggregate nor lets columns be chosen")
		}
		tb.checkOpenIncidents(d)
		tb.screenshot(shots, "website")
		if w := tb.eval(`() => document.querySelector('#pages-table .scroll').scrollWidth - document.querySelector('#pages-table .scroll').clientWidth`).(float64); w > 0 {
			t.Errorf("the pages table at 1,280 px scrolls sideways by %v px", w)
		}
		// A toast speaks of its view only.
		tb.eval(`() => { document.getElementById('status').textContent = 'Audits queued.'; }`)
		tb.view(W + "/events")
		if s := tb.text("#status"); s != "" {
			t.Errorf("a toast of the website view shows in the events view: %q", s)
		}
		tb.view(W + "?device=mobile")
		// By keyboard alone: tabbing reaches the table's first sort button, Enter sorts.
		sorted := false
		for range 40 {
			if err := tb.page.Keyboard.Type(input.Tab); err != nil {
				t.Fatal(err)
			}
			if tb.eval(`() => document.activeElement.classList.contains('sort')`).(bool) {
				if err := tb.page.Keyboard.Type(input.Enter); err != nil {
					t.Fatal(err)
				}
				sorted = tb.eval(`() => document.activeElement.closest('th').getAttribute('aria-sort') !== null`).(bool)
				break
			}
		}
		if !sorted {
			t.Error("the pages table cannot be sorted by keyboard")
		}

		// Page: the latest values are the API's, and every chart is drawn.
		tb.view(W + "/page/" + home.ID + "?device=mobile&days=30")
		var detail struct{ LatestMetrics map[string]float64 }
		d.Call(t, "GET", "/"+d.site.ID+"/pages/"+home.ID+"?device=mobile", localtest.ViewerKey, "", 200, &detail)
		stats := tb.text(".stats")
		for _, m := range []struct{ name, unit string }{{"lcp", "ms"}, {"fcp", "ms"}, {"performance_score", "score"}} {
			if want := uiNumber(detail.LatestMetrics[m.name], m.unit); !strings.Contains(stats, want) {
				t.Errorf("page stats %q have no %s %s", stats, m.name, want)
			}
		}
		var ux struct {
			LatestUx map[string]any
		}
		d.Call(t, "GET", "/"+d.site.ID+"/pages/"+home.ID+"?device=mobile", localtest.ViewerKey, "", 200, &ux)
		lcp, _ := ux.LatestUx["lcp"].(map[string]any)
		if lcp == nil {
			t.Fatalf("the API has no field LCP: %v", ux.LatestUx)
		}
		if field := tb.text("#field-vs-lab"); !strings.Contains(field, "(LCP)\t"+uiNumber(lcp["value"].(float64), "ms")) {
			t.Errorf("field against lab %q: want the API's field LCP p75 %v", field, lcp["value"])
		}
		if total, blank := tb.chartCanvases(); total < 10 || blank > 0 {
			t.Errorf("%d charts, %d of them blank: want 10 drawn", total, blank)
		}
		if n := tb.eval(`() => document.querySelectorAll('figure details table tbody tr').length`).(float64); n < 15 {
			t.Errorf("the charts' number tables hold %v rows: want every day", n)
		}
		tb.checkChartScales()
		tb.checkAnnotationMarkers("Deploy v2.4")
		// The crosshair shows the day's values in every chart at once.
		tb.hoverChart()
		if n := tb.eval(`() => [...document.querySelectorAll('.readout')].filter(r => /^\d{4}-\d\d-\d\d: /.test(r.textContent)).length`).(float64); n < 9 {
			t.Errorf("%v charts show the day's values under a crosshair: want every chart of the page", n)
		}
		tb.screenshot(shots, "page")
		tb.checkDiagnostics(d, home.ID, shots)
		// A year's range has the scores of the whole year (the demo's first days).
		var year struct{ Result []map[string]any }
		from, to := time.Now().UTC().AddDate(0, 0, -364), time.Now().UTC()
		d.Call(t, "GET", "/"+d.site.ID+"/pages/"+home.ID+"/timeline?device=mobile&date="+from.Format("20060102")+"-"+to.Format("20060102"), localtest.ViewerKey, "", 200, &year)
		tb.view(W + "/page/" + home.ID + "?device=mobile&from=" + from.Format("2006-01-02") + "&to=" + to.Format("2006-01-02"))
		if got := tb.eval(`() => [document.getElementById('range').value, document.getElementById('range-from').value]`).([]any); got[0] != "custom" || got[1] != from.Format("2006-01-02") {
			t.Errorf("a custom range shows as %v", got)
		}
		scores := tb.eval(`() => { const f = [...document.querySelectorAll('figure')].find(f => f.querySelector('figcaption').textContent.startsWith('Lighthouse scores')); return f.querySelectorAll('details tbody tr').length; }`).(float64)
		if int(scores) != len(year.Result) || scores == 0 {
			t.Errorf("the scores chart over a year has %v days, the API's timeline %d", scores, len(year.Result))
		}
		tb.checkChartScales()
		// The dark scheme follows the system's, charts included: at once, in the open page, and
		// in a new one.
		tb.eval(`() => { window.lightCharts = [...document.querySelectorAll('.plot')].map(p => p.uplot); }`)
		if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}).Call(tb.page); err != nil {
			t.Fatal(err)
		}
		tb.checkChartsFollowScheme()
		tb.goTo("?scheme=dark" + W + "/page/" + home.ID + "?device=mobile&days=30") // a new document
		tb.waitIdle()
		if bg := tb.eval(`() => getComputedStyle(document.body).backgroundColor`).(string); bg == "rgb(255, 255, 255)" {
			t.Error("the dark scheme is not followed")
		}
		if total, blank := tb.chartCanvases(); total < 6 || blank > 0 {
			t.Errorf("dark scheme: %d charts, %d blank", total, blank)
		}
		tb.screenshot(shots, "page-dark")
		if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: "light"}}}).Call(tb.page); err != nil {
			t.Fatal(err)
		}

		// Multistep: the failed run's error and screenshot.
		tb.view(W + "/multistep")
		if !strings.Contains(tb.text("table"), "Checkout") {
			t.Errorf("tests table %q", tb.text("table"))
		}
		if tb.has("#run-all") {
			t.Error("a viewer is offered to run all tests")
		}
		tb.screenshot(shots, "multistep")
		var tests struct {
			Result struct{ List []struct{ ID, Alias string } }
		}
		d.Call(t, "GET", "/"+d.site.ID+"/multistep", localtest.ViewerKey, "", 200, &tests)
		for _, tt := range tests.Result.List {
			if tt.Alias != "Checkout" {
				continue
			}
			tb.view(W + "/multistep/" + tt.ID)
			if !strings.Contains(tb.text("main"), "failed") {
				t.Errorf("the failed run is not shown")
			}
			shot, err := tb.page.Timeout(10*time.Second).ElementR("button", "Screenshot")
			if err != nil {
				t.Fatalf("no screenshot button on the failed run: %v", err)
			}
			if err := shot.Click(proto.InputMouseButtonLeft, 1); err != nil {
				t.Fatal(err)
			}
			if err := tb.page.Timeout(15 * time.Second).Wait(rod.Eval(`() => { const i = document.querySelector('img.shot'); return i && i.complete && i.naturalWidth > 0 }`)); err != nil {
				t.Errorf("the failure screenshot is not shown: %v", err)
			}
			tb.checkChartScales()
			tb.checkZeroBars("Success rate")
			tb.screenshot(shots, "multistep-test")
			tb.narrow(shots, "multistep-test", "")
		}

		// Real users: the page views and p75 the API reports.
		tb.view(W + "/rum?by=pages&metric=lcp&days=7")
		var rum struct {
			Result struct {
				Count int
				List  map[string]map[string]float64
			}
		}
		d.Call(t, "GET", "/"+d.site.ID+"/field-testing/pages?timing=lcp&date="+time.Now().UTC().AddDate(0, 0, -6).Format("20060102")+"-"+time.Now().UTC().Format("20060102"), localtest.ViewerKey, "", 200, &rum)
		if len(rum.Result.List) == 0 {
			t.Fatal("the API reports no page view")
		}
		rumTable := tb.text("#rum-table")
		for k, item := range rum.Result.List {
			if want := k + "\t" + uiNumber(item["count"], "score"); !strings.Contains(rumTable, want) {
				t.Errorf("real users table %q has no row %q", rumTable, want)
			}
			if want := uiNumber(item["lcp"], "ms"); !strings.Contains(rumTable, want) {
				t.Errorf("real users table %q has no p75 %q of %s", rumTable, want, k)
			}
		}
		// The vital's trend, ratings and distribution (TestDashboardRealUsers checks them), and
		// the report per page.
		if total, blank := tb.chartCanvases(); total != 4 || blank != 0 {
			t.Errorf("real users: %d charts, %d blank", total, blank)
		}
		if !strings.Contains(tb.text("#snippet"), "/rum/"+d.site.ID+".js") {
			t.Error("no snippet to copy")
		}
		tb.screenshot(shots, "real-users")
		// The demo's attribution as its real visits measured it: the buy button (renamed by
		// the deploy) and the shop's cart script for INP, on phones over four weeks.
		tb.view(W + "/rum?vital=inp&device=mobile&days=28")
		if attr := tb.text("#rum-attributions"); !strings.Contains(attr, "#checkout") || !strings.Contains(attr, "#buy") || !strings.Contains(attr, "cart.js") {
			t.Errorf("the demo's INP attributions on mobile %q: want both buttons and the cart script", attr)
		}
		tb.screenshot(shots, "real-users-demo-inp")
		tb.view(W + "/rum?vital=lcp&seg=device&days=28")
		if attr := tb.text("#rum-attributions"); !strings.Contains(attr, "img.hero") {
			t.Errorf("the demo's LCP attributions %q: want the hero", attr)
		}
		if seg := tb.text("#rum-segments"); !strings.Contains(seg, "mobile") || !strings.Contains(seg, "desktop") {
			t.Errorf("the demo's real users by device %q: want phones and desktops", seg)
		}
		tb.screenshot(shots, "real-users-demo-lcp")

		// Events: what the audits raised, as the API lists it.
		var evs struct {
			Result struct{ List []struct{ Summary string } }
		}
		d.Call(t, "GET", "/"+d.site.ID+"/events", localtest.ViewerKey, "", 200, &evs)
		tb.view(W + "/events")
		tb.screenshot(shots, "events")
		if len(evs.Result.List) == 0 || !strings.Contains(tb.text("main"), evs.Result.List[0].Summary) {
			t.Errorf("events view does not show the API's events %v", evs.Result.List)
		}
		var series struct {
			Result struct {
				List []struct{ Status, Description string }
			}
		}
		d.Call(t, "GET", "/"+d.site.ID+"/testseries", localtest.ViewerKey, "", 200, &series)
		if l := series.Result.List; len(l) != 1 || !strings.Contains(tb.text("main"), l[0].Status+"\t"+l[0].Description) {
			t.Errorf("events view does not show the API's test series %+v", l)
		}
		var incidents struct {
			Result struct {
				List []struct {
					ID, Kind, FirstBadDay string
					Regressions           []struct {
						Metric, Unit string
						After        struct{ Median float64 }
					}
				}
			}
		}
		d.Call(t, "GET", "/"+d.site.ID+"/incidents", localtest.ViewerKey, "", 200, &incidents)
		tb.view(W + "/regressions")
		main := tb.text("main")
		if !strings.Contains(main, "Deploy v2.4") {
			t.Error("annotations are not listed")
		}
		if n := tb.eval(`() => document.querySelectorAll('ul.incidents > li').length`).(float64); int(n) != len(incidents.Result.List) || n == 0 {
			t.Errorf("incidents view lists %v, the API %d", n, len(incidents.Result.List))
		}
		for _, in := range incidents.Result.List {
			item := tb.text("#incident-" + in.ID)
			if !strings.Contains(item, "from "+in.FirstBadDay) {
				t.Errorf("incident %q lacks its first bad day %s", item, in.FirstBadDay)
			}
			for _, g := range in.Regressions {
				if g.Unit == "ms" && !strings.Contains(item, uiNumber(g.After.Median, "ms")) {
					t.Errorf("incident %q lacks the %s's new level %v ms", item, g.Metric, g.After.Median)
				}
			}
		}
		if tb.has("ul.incidents input.pick") || tb.has("#ack-selected") {
			t.Error("a viewer is offered to acknowledge")
		}
		tb.screenshot(shots, "regressions")
		if tb.has(`form[aria-label="Add an annotation"]`) {
			t.Error("a viewer is offered to annotate")
		}
		tb.view(W + "/settings")
		if tb.has("#delete-website") || tb.has("#paste-pages") || tb.eval(`() => [...document.querySelectorAll('main button')].some(b => /Delete|Edit/.test(b.textContent))`).(bool) {
			t.Error("a viewer is offered admin actions in the settings")
		}

		// Signing out forgets the key, and a reload stays signed out.
		if err := tb.page.MustElement("#signout").Click(proto.InputMouseButtonLeft, 1); err != nil {
			t.Fatal(err)
		}
		if k := tb.eval(`() => sessionStorage.getItem('openvitals.key')`); k != nil {
			t.Errorf("the key is kept after signing out: %v", k)
		}
		tb.goTo("")
		if !tb.has("#key") {
			t.Error("a reload after signing out is not the sign-in form")
		}
	})

	t.Run("remembered key", func(t *testing.T) {
		checkRememberedKey(t, d, b, W+"/page/"+home.ID+"?device=mobile")
	})

	t.Run("390 px", func(t *testing.T) {
		checkNarrow(t, d, b, shots, [][2]string{{"#/", "websites"}, {W + "?device=mobile", "website"},
			{W + "/page/" + home.ID + "?device=mobile&days=30", "page"}, {W + "/multistep", "multistep"},
			{W + "/rum?by=pages&metric=lcp&days=7", "real-users"}, {W + "/regressions", "regressions"},
			{W + "/events", "events"}, {W + "/settings", "settings"}})
	})

	t.Run("admin", func(t *testing.T) {
		tb := d.signedIn(t, b, localtest.AdminKey)
		if !tb.has(`form[aria-label="Add a website"]`) {
			t.Fatal("an admin is not offered to add a website")
		}
		// Adding a website through the form: the API has it.
		if err := tb.page.MustElement(`input[name="domain"]`).Input("admin-added.example"); err != nil {
			t.Fatal(err)
		}
		if err := tb.page.MustElementR("button", "Add website").Click(proto.InputMouseButtonLeft, 1); err != nil {
			t.Fatal(err)
		}
		if err := tb.page.Timeout(15 * time.Second).Wait(rod.Eval(`() => location.hash.endsWith('/settings')`)); err != nil {
			t.Fatalf("adding a website did not lead to its settings: %v", err)
		}
		tb.waitIdle()
		var ws struct {
			Result struct{ List []struct{ Domain string } }
		}
		d.Call(t, "GET", "/websites", localtest.AdminKey, "", 200, &ws)
		if len(ws.Result.List) != 2 {
			t.Errorf("websites after adding one: %+v", ws.Result.List)
		}
		if !tb.has("#paste-pages") || !tb.has("#delete-website") {
			t.Fatal("an admin is not offered to add pages or delete the website")
		}
		tb.screenshot(shots, "settings")
		added := strings.TrimSuffix(strings.TrimPrefix(tb.eval(`() => location.hash`).(string), "#/w/"), "/settings")
		// Pages pasted, a budget and a multistep test made with the forms: the API has them.
		tb.fill("#paste-pages", "/ Home\n/pricing Pricing")
		tb.click("button", "Add pages")
		tb.waitFor("the pasted pages", `() => document.querySelectorAll('main table')[0]?.tBodies[0].rows.length === 2`)
		tb.fill(`form[aria-label="Add a budget"] input[name="value"]`, "2000")
		tb.click("button", "Add budget")
		tb.waitFor("the budget", `() => [...document.querySelectorAll('main td')].some(td => td.textContent === 'below 2,000 ms (mobile)')`)
		tb.click("summary", "New multistep test")
		tb.fill(`form[aria-label="New multistep test"] input[name="alias"]`, "Smoke")
		tb.click("button", "Add a step")
		if _, err := tb.page.Eval(`() => {
			const steps = document.querySelectorAll('form[aria-label="New multistep test"] ol.steps > li');
			const last = steps[steps.length - 1];
			last.querySelector('select[name="type"]').value = 'click';
			last.querySelector('input[name="target"]').value = '#buy';
		}`); err != nil {
			t.Fatal(err)
		}
		tb.click("button", "Create test")
		tb.waitFor("the test", `() => [...document.querySelectorAll('main a')].some(a => a.textContent === 'Smoke')`)
		// An admin's settings, forms and all, fit a phone too.
		tb.eval(`() => document.querySelectorAll('main details').forEach(d => { d.open = true; })`)
		tb.narrow(shots, "settings-admin", "")
		var made struct {
			Result struct {
				List []struct {
					Alias string
					Steps []struct{ Type, Target string }
				}
			}
		}
		d.Call(t, "GET", "/"+added+"/multistep", localtest.AdminKey, "", 200, &made)
		if l := made.Result.List; len(l) != 1 || l[0].Alias != "Smoke" || len(l[0].Steps) != 2 || l[0].Steps[1].Type != "click" || l[0].Steps[1].Target != "#buy" {
			t.Errorf("the test made with the steps editor: %+v", l)
		}
		var pasted struct {
			Result struct{ List []struct{ URL, Alias string } }
		}
		d.Call(t, "GET", "/"+added+"/settings/pages", localtest.AdminKey, "", 200, &pasted)
		if len(pasted.Result.List) != 2 {
			t.Errorf("pages pasted: %+v", pasted.Result.List)
		}
		// Deleting asks first: the website goes once the question is accepted.
		wait, handle := tb.page.HandleDialog()
		go func() {
			wait()
			_ = handle(&proto.PageHandleJavaScriptDialog{Accept: true})
		}()
		tb.click("button", "Delete admin-added.example")
		if err := tb.page.Timeout(15 * time.Second).Wait(rod.Eval(`() => location.hash === '#/'`)); err != nil {
			t.Fatalf("deleting the website did not lead back to the websites: %v", err)
		}
		d.Call(t, "GET", "/"+added+"/settings/pages", localtest.AdminKey, "", 404, nil)

		tb.view(W)
		if !tb.has("#audit-now") {
			t.Error("an admin is not offered to audit now")
		}
		// The Lighthouse report of today, in its sandboxed frame.
		tb.view(W + "/page/" + home.ID + "?device=desktop")
		if err := tb.page.MustElementR("button", "Show the report").Click(proto.InputMouseButtonLeft, 1); err != nil {
			t.Fatal(err)
		}
		frame, err := tb.page.Timeout(15 * time.Second).Element("iframe.report")
		if err != nil {
			t.Fatal(err)
		}
		if sb, _ := frame.Attribute("sandbox"); sb == nil || strings.Contains(*sb, "allow-same-origin") {
			t.Errorf("report frame sandbox %v", sb)
		}
		src, _ := frame.Attribute("src")
		res, err := http.Get(d.Base + *src)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") || !strings.Contains(string(body), "__LIGHTHOUSE_JSON__") {
			t.Errorf("report link: %d, CSP %q, %d bytes", res.StatusCode, res.Header.Get("Content-Security-Policy"), len(body))
		}
		// The frame's document is another origin (the sandbox): what it shows is read from its
		// pixels, which Lighthouse's report fills with gauges and text.
		if err := frame.ScrollIntoView(); err != nil {
			t.Fatal(err)
		}
		drawn := 0.0
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && drawn < 0.05; time.Sleep(500 * time.Millisecond) {
			png, err := frame.Screenshot(proto.PageCaptureScreenshotFormatPng, 0)
			if err != nil {
				t.Fatal(err)
			}
			drawn = inkShare(t, png)
		}
		if drawn < 0.05 {
			t.Errorf("the report frame shows %.1f %% of non-white pixels: Lighthouse's report is not rendered", drawn*100)
		}
		tb.screenshot(shots, "lighthouse-report")
	})

	t.Run("restart", func(t *testing.T) {
		d.Stop()
		d.Start(t)
		d.WaitFor(t, "the demo found again", func() bool { return d.Log.Count("demo website found: not seeding it again") == 1 })
		if n := d.Log.Count("seeding the demo website"); n != 1 {
			t.Errorf("the demo was seeded %d times over the same data, want once", n)
		}
		var ws struct {
			Result struct{ List []struct{ ID string } }
		}
		d.Call(t, "GET", "/websites", localtest.ViewerKey, "", 200, &ws)
		if l := ws.Result.List; len(l) != 1 || l[0].ID != d.site.ID {
			t.Errorf("websites after the restart %+v, want the demo's %s alone", l, d.site.ID)
		}
	})
}
