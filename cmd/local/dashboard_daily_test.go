package main

import (
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// checkChartScales: every chart of the view reads its values from zero (no axis starting
// at the lowest value), and a score or percent chart ends at 100.
func (tb *tab) checkChartScales() {
	tb.t.Helper()
	res := tb.eval(`() => [...document.querySelectorAll('.plot')].filter(p => p.uplot).map(p => [p.closest('figure').querySelector('figcaption').textContent, p.uplot.scales.y.min, p.uplot.scales.y.max])`).([]any)
	if len(res) == 0 {
		tb.t.Fatal("no chart to check")
	}
	for _, r := range res {
		c := r.([]any)
		title, lo, hi := c[0].(string), c[1].(float64), c[2].(float64)
		if lo != 0 {
			tb.t.Errorf("chart %q: its y axis starts at %v, want 0", title, lo)
		}
		if (strings.Contains(title, "0–100")) && hi != 100 {
			tb.t.Errorf("chart %q: its y axis ends at %v, want 100", title, hi)
		}
	}
}

// checkAnnotationMarkers: the annotation is listed once, and each chart marks it with a
// button named by its text, whose text shows on focus.
func (tb *tab) checkAnnotationMarkers(text string) {
	tb.t.Helper()
	if list := tb.text("#annotations"); strings.Count(list, text) != 1 {
		tb.t.Errorf("annotations list %q: want %q once", list, text)
	}
	if n := tb.eval(`t => [...document.querySelectorAll('figure')].filter(f => f.innerText.includes(t)).length`, text).(float64); n != 0 {
		tb.t.Errorf("the annotation's text shows under %v charts, want none (the markers show it on hover and focus)", n)
	}
	charts := tb.eval(`() => [...document.querySelectorAll('.plot')].filter(p => p.uplot && p.closest('figure').querySelector('details table tbody tr')).length`).(float64)
	marks := tb.eval(`t => [...document.querySelectorAll('.plotbox .note')].filter(b => !b.hidden && b.getAttribute('aria-label').includes(t)).length`, text).(float64)
	if charts == 0 || marks < charts-1 { // the transfer chart's days may start after it
		tb.t.Errorf("%v markers named %q on %v charts", marks, text, charts)
	}
	shown := tb.eval(`t => { const b = [...document.querySelectorAll('.plotbox .note:not([hidden])')].find(b => b.getAttribute('aria-label').includes(t)); b.focus(); const tip = b.querySelector('.tip'); return getComputedStyle(tip).display !== 'none' && tip.getBoundingClientRect().width > 0 ? tip.textContent : ''; }`, text).(string)
	if !strings.Contains(shown, text) {
		tb.t.Errorf("a focused marker shows %q, want its annotation", shown)
	}
	tb.eval(`() => document.activeElement.blur()`)
}

// checkPagesCSV: the pages table's CSV holds the API's numbers, row for row.
func (tb *tab) checkPagesCSV(d *dashboard, device string) {
	tb.t.Helper()
	text := tb.eval(`() => document.querySelector('#pages-table .tablebox').csv()`).(string)
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		tb.t.Fatalf("the pages CSV %q: %v", text, err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var out struct {
		Result struct {
			List []struct {
				URL, Device string
				Latest      map[string]any
			}
		}
	}
	d.call(tb.t, "GET", "/"+d.site.ID+"/pages", dashViewerKey, "", 200, &out)
	rows := 0
	for _, p := range out.Result.List {
		if p.Device != device {
			continue
		}
		rows++
		var rec []string
		for _, r := range recs[1:] {
			if r[col["Page"]] == p.URL {
				rec = r
			}
		}
		if rec == nil {
			tb.t.Errorf("the CSV has no row for %s", p.URL)
			continue
		}
		for field, header := range map[string]string{"performance_score": "Performance", "lcp": "LCP (ms)", "cls": "CLS", "tbt": "TBT (ms)", "fcp": "FCP (ms)", "kb_total": "Transfer (KB)", "ux_lcp": "Field LCP (ms)"} {
			i, ok := col[header]
			if !ok {
				tb.t.Errorf("the CSV has no column %q: %v", header, recs[0])
				continue
			}
			want := ""
			if v, ok := p.Latest[field].(float64); ok {
				want = strconv.FormatFloat(v, 'f', -1, 64)
			}
			if rec[i] != want {
				tb.t.Errorf("CSV %s of %s: %q, the API %q", header, p.URL, rec[i], want)
			}
		}
	}
	if rows == 0 || len(recs)-1 != rows {
		tb.t.Errorf("the CSV has %d rows, the API %d", len(recs)-1, rows)
	}
}

// checkRememberedKey: a key remembered on this device opens a link in a new tab of the same
// browser; signed out, it is forgotten and a new tab asks for a key; a key not remembered
// stays in its tab.
func checkRememberedKey(t *testing.T, d *dashboard, b *rod.Browser, deepLink string) {
	first := d.open(t, b)
	first.goTo("")
	first.signIn(dashViewerKey)
	first.waitSignedIn()
	other := d.open(t, b)
	other.goTo(deepLink)
	if err := other.page.Timeout(15 * time.Second).Wait(rod.Eval(`() => document.getElementById('key') !== null`)); err != nil {
		t.Errorf("a key kept in its tab opened a link in a new tab: %v", err)
	}
	first.eval(`() => document.getElementById('signout').click()`)

	first = d.open(t, b)
	first.goTo("")
	if !first.has("#remember") || !strings.Contains(first.text(".signin"), "until you sign out") {
		t.Fatal("no remember checkbox with its trade-off")
	}
	first.eval(`() => document.getElementById('remember').click()`)
	first.signIn(dashViewerKey)
	first.waitSignedIn()
	if k := first.eval(`() => [localStorage.getItem('openvitals.key'), sessionStorage.getItem('openvitals.key')]`).([]any); k[0] != dashViewerKey || k[1] != nil {
		t.Errorf("a remembered key is kept as %v: want local storage only", k)
	}
	second := d.open(t, b)
	second.goTo(deepLink)
	second.waitSignedIn()
	if second.has("#key") || !second.has(".plot") {
		t.Error("a remembered key does not open a link in a new tab")
	}
	second.eval(`() => document.getElementById('signout').click()`)
	if k := second.eval(`() => localStorage.getItem('openvitals.key')`); k != nil {
		t.Errorf("signing out keeps the remembered key: %v", k)
	}
	third := d.open(t, b)
	third.goTo(deepLink)
	if err := third.page.Timeout(15 * time.Second).Wait(rod.Eval(`() => document.getElementById('key') !== null`)); err != nil {
		t.Errorf("a forgotten key still opens a link in a new tab: %v", err)
	}
}

// checkNarrow: at 390 px every view is usable (see tab.fitsNarrow); each view's screenshot is
// written as name-390.
func checkNarrow(t *testing.T, d *dashboard, b *rod.Browser, shots string, views [][2]string) {
	tb := d.open(t, b)
	tb.goTo("")
	tb.setSize(390, 844)
	tb.fitsNarrow("sign-in")
	tb.screenshot(shots, "sign-in-390")
	tb.signIn(dashViewerKey)
	tb.waitSignedIn()
	for _, v := range views {
		tb.view(v[0])
		time.Sleep(300 * time.Millisecond)
		tb.fitsNarrow(v[1])
		tb.screenshot(shots, v[1]+"-390")
	}
	tb.eval(`() => document.getElementById('signout').click()`)
}

// narrow checks the view the tab shows at 390 px as checkNarrow does, writes its screenshot
// as name-390 (of the element selector names, in a window tall enough for it, or of the
// whole page when selector is empty), and brings the tab back to 1280 px.
func (tb *tab) narrow(shots, name, selector string) {
	tb.t.Helper()
	tb.setSize(390, 844)
	defer tb.setSize(1280, 900)
	time.Sleep(300 * time.Millisecond)
	tb.fitsNarrow(name)
	if selector == "" {
		tb.screenshot(shots, name+"-390")
		return
	}
	// An element's screenshot is cut from the window.
	tall := tb.eval(`s => Math.ceil(document.querySelector(s).getBoundingClientRect().height)`, selector).(float64)
	tb.setSize(390, max(844, int(tall)+40))
	tb.elementShot(shots, name+"-390", selector)
}

// setSize gives the tab a window of w × h CSS pixels: a phone's at 390 px and below.
func (tb *tab) setSize(w, h int) {
	tb.t.Helper()
	if err := (proto.EmulationSetDeviceMetricsOverride{Width: w, Height: h, DeviceScaleFactor: 1, Mobile: w <= 390}).Call(tb.page); err != nil {
		tb.t.Fatal(err)
	}
	if err := tb.page.Timeout(5 * time.Second).Wait(rod.Eval(`w => document.documentElement.clientWidth <= w`, w)); err != nil {
		tb.t.Fatal(err)
	}
}

// fitsNarrow fails the test when the view (name) goes past the screen's right edge: nothing
// but a table region (.scroll) or a chart scrolls sideways, and no text is cut.
func (tb *tab) fitsNarrow(name string) {
	tb.t.Helper()
	wide := tb.eval(`() => {
		const out = [];
		if (document.documentElement.scrollWidth > innerWidth) out.push('the page: ' + document.documentElement.scrollWidth + ' px');
		for (const e of document.querySelectorAll('main *')) {
			if (e.closest('.scroll') || e.closest('.plot') || e.closest('details:not([open])') || !e.getClientRects().length) continue;
			const r = e.getBoundingClientRect();
			if (r.right > innerWidth + 1) out.push(e.tagName + (e.getAttribute('class') ? '.' + e.getAttribute('class') : '') + ' ' + (e.textContent || '').slice(0, 40) + ': right ' + Math.round(r.right));
		}
		return out.slice(0, 5);
	}`).([]any)
	if len(wide) > 0 {
		tb.t.Errorf("%s at 390 px goes past the screen: %v", name, wide)
	}
}

// hoverChart moves the mouse over the right end of the first chart, as a person reading the
// last day does.
func (tb *tab) hoverChart() {
	tb.t.Helper()
	over, err := tb.page.Timeout(15 * time.Second).Element(".plot .u-over")
	if err != nil {
		tb.t.Fatal(err)
	}
	if err := over.ScrollIntoView(); err != nil {
		tb.t.Fatal(err)
	}
	r := tb.eval(`() => { const r = document.querySelector('.plot .u-over').getBoundingClientRect(); return [r.right - 4, r.top + 20]; }`).([]any)
	if err := tb.page.Mouse.MoveTo(proto.Point{X: r[0].(float64), Y: r[1].(float64)}); err != nil {
		tb.t.Fatal(err)
	}
}
