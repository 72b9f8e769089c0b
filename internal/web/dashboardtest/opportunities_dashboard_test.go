package dashboardtest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/testing/browsertest"
	"github.com/openvitals/openvitals/internal/testing/localtest"
	"github.com/openvitals/openvitals/internal/web"
)

// TestDashboardOpportunities audits, for real, the Lighthouse fixture page whose content moves
// as it loads and whose stylesheet and script load others (internal/lighthouse/testdata/site,
// shift.html), then checks the opportunities through the API (ranked, with savings, the
// details of the layout shift culprits and the network dependency tree as Lighthouse wrote
// them) and in Chromium: the page view lists them in the API's rank order with their savings,
// and opening each shows its content: the culprits' table with the unsized image as a sub-row
// and its cause, the dependency tree nested with times and sizes (small files in B, never
// "0 KiB"). It writes the opened list's screenshot (see screenshotDir).
func TestDashboardOpportunities(t *testing.T) {
	// The dashboard's modules as they are (development's way of serving them), so that the test
	// can import the view's module and draw every details type through it.
	root := browsertest.RepoRoot(t)
	t.Setenv(web.DirEnv, filepath.Join(root, "internal", "web", "static"))
	d := startService(t, 1, false)
	shots := screenshotDir(t)
	site := httptest.NewServer(http.FileServer(http.Dir(filepath.Join(root, "internal", "lighthouse", "testdata", "site"))))
	t.Cleanup(site.Close)
	domain := strings.TrimPrefix(site.URL, "http://")

	siteID, pages := d.website(t, domain, "Fixture shop", "", `[{"url":"/shift.html","alias":"News"}]`)
	W := "/" + siteID
	page := pages[0]
	d.Call(t, "POST", W+"/audits", localtest.AdminKey, `{"devices":["desktop"]}`, 202, nil)

	type opportunity struct {
		Title, Category, CategoryTitle  string
		Rank                            int
		Impact, SavingsMs, SavingsBytes float64
		MetricSavings                   map[string]float64
	}
	var list struct {
		Result struct {
			LighthouseVersion *string
			List              map[string]opportunity
		}
	}
	P := W + "/pages/" + page.ID
	d.WaitFor(t, "the audit of /shift.html", func() bool {
		d.Call(t, "GET", P+"/opportunities?device=desktop", localtest.ViewerKey, "", 200, &list)
		return list.Result.LighthouseVersion != nil
	})
	opps := list.Result.List
	for _, id := range []string{"cls-culprits-insight", "network-dependency-tree-insight"} {
		if _, ok := opps[id]; !ok {
			t.Fatalf("%s is not among the page's opportunities %v", id, opps)
		}
	}
	ranked := make([]string, 0, len(opps))
	for id := range opps {
		ranked = append(ranked, id)
	}
	sort.Slice(ranked, func(i, j int) bool { return opps[ranked[i]].Rank < opps[ranked[j]].Rank })
	for i, id := range ranked {
		if o := opps[id]; o.Rank != i+1 || (i > 0 && o.Impact > opps[ranked[i-1]].Impact) || o.CategoryTitle == "" {
			t.Errorf("rank %d: %s %+v: ranks 1 to n by impact, with a category title", i+1, id, o)
		}
	}
	if c := opps["cache-insight"]; c.SavingsBytes <= 0 {
		t.Errorf("cache-insight %+v: the uncached hero's bytes", c)
	}
	var site2 struct {
		Result struct{ List map[string]opportunity }
	}
	d.Call(t, "GET", W+"/opportunities", localtest.ViewerKey, "", 200, &site2)
	if o := site2.Result.List["cls-culprits-insight"]; o.Rank == 0 || o.Title == "" {
		t.Errorf("the website's list has cls-culprits-insight as %+v", o)
	}

	// The details as Lighthouse wrote them: a list holding the culprits' table, and list
	// sections, the first a network tree.
	var culprits, tree struct {
		Details struct {
			Type  string
			Items []struct {
				Type  string
				Items []map[string]any
				Value struct {
					Type   string
					Chains map[string]any
				}
			}
		}
	}
	d.Call(t, "GET", P+"/opportunities/cls-culprits-insight?device=desktop", localtest.ViewerKey, "", 200, &culprits)
	if c := culprits.Details; c.Type != "list" || len(c.Items) == 0 || c.Items[0].Type != "table" || len(c.Items[0].Items) == 0 {
		t.Errorf("cls-culprits-insight details %+v", c)
	}
	d.Call(t, "GET", P+"/opportunities/network-dependency-tree-insight?device=desktop", localtest.ViewerKey, "", 200, &tree)
	if n := tree.Details; n.Type != "list" || len(n.Items) == 0 || n.Items[0].Type != "list-section" || n.Items[0].Value.Type != "network-tree" || len(n.Items[0].Value.Chains) == 0 {
		t.Errorf("network-dependency-tree-insight details %+v", n)
	}

	b := launchBrowser(t)
	tb := d.signedIn(t, b, localtest.ViewerKey)
	tb.view("#/w/" + siteID + "/page/" + page.ID + "?device=desktop")

	// The list in the API's order, each title with its savings where it has some.
	shown := tb.eval(`() => [...document.querySelectorAll('ul.opps > li summary')].map(s => s.textContent)`).([]any)
	if len(shown) != len(ranked) {
		t.Fatalf("%d opportunities shown, the API has %d", len(shown), len(ranked))
	}
	for i, id := range ranked {
		s := shown[i].(string)
		if !strings.HasPrefix(s, opps[id].Title) || !strings.Contains(s, opps[id].CategoryTitle) {
			t.Errorf("opportunity %d shown as %q, want %s (%s) in the API's rank order", i+1, s, opps[id].Title, opps[id].CategoryTitle)
		}
		if o := opps[id]; (o.SavingsMs > 0 || o.SavingsBytes > 0) && !strings.Contains(s, "Est. savings") {
			t.Errorf("%s shown as %q: without its savings %v ms, %v bytes", id, s, o.SavingsMs, o.SavingsBytes)
		}
	}

	// open opens an opportunity by its title and returns its content's text once loaded.
	open := func(title string) string {
		t.Helper()
		tb.eval(`t => { [...document.querySelectorAll('ul.opps details')].find(d => d.querySelector('summary').textContent.startsWith(t)).open = true }`, title)
		tb.waitFor(title+" shown", `() => [...document.querySelectorAll('ul.opps details')].some(d => d.open && d.querySelector('summary').textContent.startsWith(`+jsString(title)+`) && d.querySelector('.audit'))`)
		return tb.eval(`t => [...document.querySelectorAll('ul.opps details')].find(d => d.querySelector('summary').textContent.startsWith(t)).querySelector('.audit').innerText`, title).(string)
	}
	cls := open(opps["cls-culprits-insight"].Title)
	if !strings.Contains(cls, "img.late") || !strings.Contains(cls, "Unsized image element") || !regexp.MustCompile(`0\.2\d\d`).MatchString(cls) {
		t.Errorf("layout shift culprits show %q: want the unsized image, its cause and the shift score", cls)
	}
	deps := open(opps["network-dependency-tree-insight"].Title)
	// Nested: the page holds the stylesheet, which holds the one it imports.
	nested := tb.eval(`() => [...document.querySelectorAll('ul.tree li')].some(li => li.querySelector(':scope > .url').textContent.endsWith('/shift.html') &&
		[...li.querySelectorAll(':scope > ul > li')].some(c => c.querySelector(':scope > .url').textContent.endsWith('/shift.css') &&
			[...c.querySelectorAll(':scope > ul > li > .url')].some(g => g.textContent.endsWith('/shift-base.css'))))`).(bool)
	if !nested || !regexp.MustCompile(`shift-base\.css \d+ ms, \d+ B`).MatchString(deps) || regexp.MustCompile(`(^|[^0-9.])0 Ki?B`).MatchString(deps) || !strings.Contains(deps, "Longest chain") {
		t.Errorf("network dependency tree shows %q (nested %v): want page > stylesheet > imported stylesheet, each with its time and size in B", deps, nested)
	}

	// A checklist: LCP request discovery's, each check marked.
	if lcp := opps["lcp-discovery-insight"]; lcp.Title != "" {
		if got := open(lcp.Title); !strings.Contains(got, "✓") && !strings.Contains(got, "✗") {
			t.Errorf("LCP request discovery shows %q: want its checks marked", got)
		}
		// Closed again: the screenshot below shows the other two open, within the window.
		tb.eval(`t => { [...document.querySelectorAll('ul.opps details')].find(d => d.querySelector('summary').textContent.startsWith(t)).open = false }`, lcp.Title)
	}

	// The other types Lighthouse's audits use, each shown for what it is.
	all := tb.eval(`async () => (await import('/app/view-opportunities.js')).auditDetails({ description: 'See [the docs](https://example.com/docs).', displayValue: 'Est savings of 1 KiB', details: { type: 'list', items: [
		{ type: 'opportunity', headings: [{ key: 'url', valueType: 'url', label: 'URL' }, { key: 'wastedBytes', valueType: 'bytes', label: 'Savings' }, { key: 'wastedMs', valueType: 'ms', label: 'Time' }],
		  items: [{ url: 'https://example.com/a.js', wastedBytes: 512, wastedMs: 12345 }, { url: 'https://example.com/b.js', wastedBytes: 2048, wastedMs: 80 }] },
		{ type: 'table', headings: [{ key: 'source', valueType: 'source-location', label: 'Source' }, { key: 'snippet', valueType: 'code', label: 'Code' }, { key: 'n', valueType: 'numeric', granularity: 0.01, label: 'N' }],
		  items: [{ source: { type: 'source-location', url: 'https://example.com/c.js', line: 9, column: 4, urlProvider: 'network' }, snippet: 'eval(x)', n: 0.123456 }] },
		{ type: 'criticalrequestchain', longestChain: { duration: 420, length: 2, transferSize: 900 },
		  chains: { a: { request: { url: 'https://example.com/', startTime: 1, endTime: 1.2, transferSize: 700 }, children: { b: { request: { url: 'https://example.com/d.css', startTime: 1.2, endTime: 1.42, transferSize: 200 } } } } } },
		{ type: 'url', value: 'https://example.com/e.png' }, { type: 'code', value: 'x = 1' }, { type: 'text', value: 'plain words' },
		{ type: 'checklist', items: { ok: { label: 'Done right', value: true }, no: { label: 'Done wrong', value: false } } },
		{ type: 'screenshot', data: 'data:image/jpeg;base64,AAAA' }] } }).textContent`).(string)
	for _, want := range []string{"See the docs.", "Est savings of 1 KiB", "https://example.com/a.js", "512 B", "2 KiB", "12.3 s", "80 ms",
		"https://example.com/c.js:10:4", "eval(x)", "0.12", "Longest chain: 420 ms, 2 requests, 900 B", "https://example.com/d.css", "220 ms, 200 B",
		"https://example.com/e.png", "x = 1", "plain words", "✓ Done right", "✗ Done wrong"} {
		if !strings.Contains(all, want) {
			t.Errorf("every details type: %q has no %q", all, want)
		}
	}
	if regexp.MustCompile(`(^|[^0-9.])0 Ki?B`).MatchString(all) || strings.Contains(all, "base64") {
		t.Errorf("every details type: %q shows 0 KiB or a screenshot's data", all)
	}

	// The opened list, for the documentation.
	tb.elementShot(shots, "opportunities", "ul.opps")
	tb.narrow(shots, "opportunities", "ul.opps")

	// The website's list: ranked, first the API's first.
	tb.view("#/w/" + siteID + "?device=desktop")
	var first string
	for _, o := range site2.Result.List {
		if o.Rank == 1 {
			first = o.Title
		}
	}
	row := tb.text("#site-opps tbody tr")
	if !strings.HasPrefix(row, "1\t"+first) {
		t.Errorf("the website's first opportunity row %q, want rank 1 %q", row, first)
	}
	tb.elementShot(shots, "opportunities-website", "#site-opps")
}

// elementShot writes a screenshot of the element selector matches, scrolled into view.
func (tb *tab) elementShot(dir, name, selector string) {
	tb.t.Helper()
	el, err := tb.page.Timeout(15 * time.Second).Element(selector)
	if err != nil {
		tb.t.Fatalf("%s: %v", selector, err)
	}
	if err := el.ScrollIntoView(); err != nil {
		tb.t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	png, err := el.Screenshot(proto.PageCaptureScreenshotFormatPng, 0)
	if err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// jsString quotes s for a JavaScript expression.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(s) + "'"
}
