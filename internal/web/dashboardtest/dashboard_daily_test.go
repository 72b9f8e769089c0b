package dashboardtest

import (
	"encoding/csv"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/testing/localtest"
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
	// The timelines' charts; the page's real-user charts (#page-rum) take no annotations.
	charts := tb.eval(`() => [...document.querySelectorAll('.plot')].filter(p => p.uplot && !p.closest('#page-rum') && p.closest('figure').querySelector('details table tbody tr')).length`).(float64)
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
	d.Call(tb.t, "GET", "/"+d.site.ID+"/pages", localtest.ViewerKey, "", 200, &out)
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
		for field, header := range map[string]string{"performance_score": "Performance", "lcp": "LCP (ms)", "cls": "CLS", "tbt": "TBT (ms)", "fcp": "FCP (ms)", "kb_total": "Transfer (KiB)", "ux_lcp": "Field LCP (ms)"} {
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
	first := d.signedIn(t, b, localtest.ViewerKey)
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
	first.signIn(localtest.ViewerKey)
	first.waitSignedIn()
	if k := first.eval(`() => [localStorage.getItem('openvitals.key'), sessionStorage.getItem('openvitals.key')]`).([]any); k[0] != localtest.ViewerKey || k[1] != nil {
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

// checkNarrow: at 390 px every view is usable (see tab.fitsNarrow), in the light scheme and the
// dark; each view's screenshots are written as name-390, name-390-dark and (at 1,280 px)
// name-dark.
func checkNarrow(t *testing.T, d *dashboard, b *rod.Browser, shots string, views [][2]string) {
	tb := d.open(t, b)
	tb.goTo("")
	tb.setSize(390, 844)
	tb.fitsNarrow("sign-in")
	tb.screenshot(shots, "sign-in-390")
	tb.signIn(localtest.ViewerKey)
	tb.waitSignedIn()
	for _, v := range views {
		tb.view(v[0])
		time.Sleep(300 * time.Millisecond)
		tb.fitsNarrow(v[1])
		tb.screenshot(shots, v[1]+"-390")
	}
	// The dark scheme, at both widths: each view's screenshot as name-390-dark and name-dark.
	if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}).Call(tb.page); err != nil {
		t.Fatal(err)
	}
	for _, v := range views {
		tb.view(v[0])
		time.Sleep(300 * time.Millisecond)
		tb.fitsNarrow(v[1])
		tb.screenshot(shots, v[1]+"-390-dark")
	}
	tb.setSize(1280, 900)
	for _, v := range views {
		tb.view(v[0])
		time.Sleep(300 * time.Millisecond)
		tb.screenshot(shots, v[1]+"-dark")
	}
	if err := (proto.EmulationSetEmulatedMedia{Features: []*proto.EmulationMediaFeature{{Name: "prefers-color-scheme", Value: "light"}}}).Call(tb.page); err != nil {
		t.Fatal(err)
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
// but a table region (.scroll) or a chart scrolls sideways, and no text is cut; a table region
// shows at least half its table, and a filmstrip (as long as its load) a frame.
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
		// A table region may scroll sideways, but shows at least half of its table; a row of
		// frames shows a frame.
		for (const r of document.querySelectorAll('main .scroll')) {
			// A filmstrip is as long as its load: it scrolls, and is held to showing a frame.
			if (!r.getClientRects().length || r.closest('details:not([open])') || r.matches('.cmp-film, .filmstrip')) continue;
			if (r.scrollWidth > 2 * r.clientWidth) out.push('a table region shows ' + r.clientWidth + ' px of ' + r.scrollWidth + ': ' + (r.getAttribute('aria-label') || '').slice(0, 40));
		}
		for (const f of document.querySelectorAll('main .cmp-film, main .filmstrip')) {
			const shown = [...f.querySelectorAll('img')].some(i => { const b = i.getBoundingClientRect(); return b.width > 20 && b.left < innerWidth && b.right > 0; });
			if (f.querySelector('img') && !shown) out.push('a filmstrip shows no frame');
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

// rawIDs are the identifiers people must not read in a view: the metric fields of
// metrics.Names that are no word (lcp, kb_total; not "duration") and the LCP phases' fields
// (loadDelay), found as whole words, case and all.
func rawIDs() []string {
	var ids []string
	for _, n := range append(slices.Clone(metrics.Names), metrics.Phases...) {
		if strings.Contains(n.Field, "_") || strings.ToUpper(n.Field) == n.Label || strings.ToLower(n.Field) != n.Field {
			ids = append(ids, n.Field)
		}
	}
	return ids
}

// checkNoRawIDs fails the test on a raw metric, phase or Lighthouse insight id (lcp, kb_total,
// loadDelay, image-delivery-insight) in the visible text of the view the tab shows: the words
// on the screen, not code, typed values or addresses.
func (tb *tab) checkNoRawIDs(name string) {
	tb.t.Helper()
	found := tb.eval(`ids => {
		const words = new RegExp('(?:^|[^A-Za-z0-9_./-])(' + ids.join('|') + '|[a-z]+(?:-[a-z]+)*-insight)(?![A-Za-z0-9_-])');
		const walk = document.createTreeWalker(document.getElementById('main'), NodeFilter.SHOW_TEXT);
		const out = [];
		for (let n = walk.nextNode(); n; n = walk.nextNode()) {
			const p = n.parentElement;
			if (!p || p.closest('code, pre, textarea, script, style, [hidden], .url') || !p.getClientRects().length) continue;
			const d = p.closest('details');
			if (d && !d.open && !p.closest('summary')) continue;
			const text = n.textContent.replace(/https?:\/\/\S*/g, ' ');
			const m = text.match(words);
			if (m) out.push(m[1] + ' in "' + n.textContent.trim().slice(0, 80) + '"');
		}
		return out.slice(0, 5);
	}`, rawIDs()).([]any)
	if len(found) > 0 {
		tb.t.Errorf("%s shows raw ids: %v", name, found)
	}
}

// checkOpenIncidents: the open regressions the API lists show where people start: their count
// on the website's card, a link to each in its page's row of the pages table on each of its
// devices, and at the top of the page's view, which opens (no device asked for) on the device
// of its open regression. The tab is left on the website's view.
func (tb *tab) checkOpenIncidents(d *dashboard) {
	tb.t.Helper()
	var open struct {
		Result struct {
			List []struct {
				ID, Page string
				Devices  []string
			}
		}
	}
	d.Call(tb.t, "GET", "/"+d.site.ID+"/incidents?state=open&kind=regression", localtest.ViewerKey, "", 200, &open)
	if len(open.Result.List) == 0 {
		tb.t.Fatal("the demo has no open regression to show")
	}
	W := "#/w/" + d.site.ID
	tb.view("#/")
	if got, want := tb.text("#site-"+d.site.ID+" ~ .stats .open-incidents"), fmt.Sprintf("%d\nopen regression", len(open.Result.List)); !strings.HasPrefix(got, want) {
		tb.t.Errorf("the website's card says %q, want %q", got, want)
	}
	for _, in := range open.Result.List {
		if in.Page == "" {
			continue
		}
		for _, device := range []string{"mobile", "desktop"} {
			tb.view(W + "?device=" + device)
			linked := tb.eval(`(page, id) => { const tr = [...document.querySelectorAll('#pages-table tbody tr')].find(tr => tr.querySelector('a[href*="/page/' + page + '?"]')); return !!(tr && tr.querySelector('a.incident-link[href$="incident=' + id + '"]')); }`, in.Page, in.ID).(bool)
			if want := slices.Contains(in.Devices, device); linked != want {
				tb.t.Errorf("pages table on %s: incident %s of %v linked in its page's row: %v, want %v", device, in.ID, in.Devices, linked, want)
			}
		}
		tb.view(W + "/page/" + in.Page)
		opened := tb.eval(`() => document.querySelector('.seg[aria-label="Device"] [aria-pressed="true"]').textContent`).(string)
		if !slices.Contains(in.Devices, opened) {
			tb.t.Errorf("the page view opens on %s, its open regression is on %v", opened, in.Devices)
		}
		for _, device := range []string{"mobile", "desktop"} {
			tb.view(W + "/page/" + in.Page + "?device=" + device)
			top := tb.eval(`id => { const n = document.getElementById('page-incidents'); return !!n && n.querySelector('a.incident-link[href$="incident=' + id + '"]') !== null && n.getBoundingClientRect().top < 600; }`, in.ID).(bool)
			if !top {
				tb.t.Errorf("the page view on %s does not name the open regression %s at its top", device, in.ID)
			}
		}
	}
	tb.view(W + "?device=mobile")
}

// checkChartsFollowScheme: after the colour scheme changed (window.lightCharts holds the
// charts drawn before), every chart is drawn again in the new scheme's colours: its axes in
// the scheme's muted colour.
func (tb *tab) checkChartsFollowScheme() {
	tb.t.Helper()
	tb.waitFor("the charts drawn again", `() => [...document.querySelectorAll('.plot')].every((p, i) => !p.uplot || p.uplot !== window.lightCharts[i])`)
	bad := tb.eval(`() => {
		const muted = getComputedStyle(document.documentElement).getPropertyValue('--muted').trim();
		return [...document.querySelectorAll('.plot')].filter(p => p.uplot).map(p => {
			const a = p.uplot.axes[1], stroke = typeof a.stroke === 'function' ? a.stroke(p.uplot, 1) : a.stroke;
			return stroke === muted ? '' : p.closest('figure').querySelector('figcaption').textContent + ': ' + stroke + ', want ' + muted;
		}).filter(Boolean);
	}`).([]any)
	if len(bad) > 0 {
		tb.t.Errorf("charts keep the colours of the scheme before: %v", bad)
	}
}

// checkZeroBars: the bar chart whose caption starts with caption shows each 0 as a visible
// stub in the colour of bad values, not a bar of no height on the axis.
func (tb *tab) checkZeroBars(caption string) {
	tb.t.Helper()
	res := tb.eval(`caption => {
		const p = [...document.querySelectorAll('.plot')].find(p => p.uplot && p.closest('figure').querySelector('figcaption').textContent.startsWith(caption));
		if (!p) return 'no chart';
		const u = p.uplot, zeros = [];
		u.data[1].forEach((v, i) => { if (v === 0) zeros.push(i); });
		if (!zeros.length) return 'no bar at 0';
		const bad = getComputedStyle(document.documentElement).getPropertyValue('--bad').trim();
		const want = [1, 3, 5].map(k => parseInt(bad.slice(k, k + 2), 16));
		for (const i of zeros) {
			const x = Math.round(u.valToPos(u.data[0][i], 'x', true)), y = Math.round(u.valToPos(0, 'y', true)) - 3;
			if (x < u.bbox.left || x > u.bbox.left + u.bbox.width) continue;
			const px = u.ctx.getImageData(x, y, 1, 1).data;
			if (Math.abs(px[0] - want[0]) + Math.abs(px[1] - want[1]) + Math.abs(px[2] - want[2]) > 30) return 'the bar at 0 of index ' + i + ' is ' + px.join(',') + ' 3 px above the axis, not ' + bad;
		}
		return '';
	}`, caption).(string)
	if res != "" {
		tb.t.Errorf("chart %q: %s", caption, res)
	}
}
