package pullrequest_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/pullrequest"
)

var screenshot = flag.Bool("screenshot", false, "write docs/screenshots/pull-request-comment.png (needs Chromium)")

// comparison is a comparison as the API answers it: the home page's LCP grew by 900 ms (its
// runs' spread 80 ms) because a hero image was added and the LCP element changed; TBT moved
// within the runs' noise; a layout shift appeared; long tasks grew, most of them a tag's.
const comparison = `{
 "base": {"test": "tt_base1", "runs": 1}, "target": {"test": "tt_new1", "runs": 1},
 "metrics": [
  {"name": "performance_score", "unit": "points", "higherIsWorse": false, "base": 96, "target": 81, "change": -15, "baseSpread": null, "targetSpread": null, "beyondSpread": false},
  {"name": "lcp", "unit": "ms", "higherIsWorse": true, "base": 1400, "target": 2300, "change": 900, "baseSpread": 80, "targetSpread": 60, "beyondSpread": true},
  {"name": "fcp", "unit": "ms", "higherIsWorse": true, "base": 900, "target": 905, "change": 5, "baseSpread": 40, "targetSpread": 30, "beyondSpread": false},
  {"name": "tbt", "unit": "ms", "higherIsWorse": true, "base": 120, "target": 150, "change": 30, "baseSpread": 50, "targetSpread": 45, "beyondSpread": false},
  {"name": "cls", "unit": "", "higherIsWorse": true, "base": 0.01, "target": 0.12, "change": 0.11, "baseSpread": null, "targetSpread": null, "beyondSpread": false},
  {"name": "ttfb", "unit": "ms", "higherIsWorse": true, "base": 200, "target": 120, "change": -80, "baseSpread": null, "targetSpread": null, "beyondSpread": false}
 ],
 "loads": {
  "requests": [
   {"kind": "added", "url": "https://cdn.example.com/hero-4k.jpg", "resourceType": "Image", "thirdParty": false, "renderBlocking": false, "sizeChange": 812000, "timeChange": 0},
   {"kind": "slowed", "url": "https://tags.example.net/t.js", "resourceType": "Script", "thirdParty": true, "entity": "Example Tags", "renderBlocking": true, "sizeChange": 0, "timeChange": 240},
   {"kind": "removed", "url": "https://example.com/old.css", "resourceType": "Stylesheet", "sizeChange": -3000, "timeChange": 0}
  ],
  "lcp": {"base": {"time": 1400, "selector": "h1.title"}, "target": {"time": 2300, "selector": "img.hero"}, "elementChanged": true,
   "phases": [{"name": "ttfb", "change": -80}, {"name": "loadDelay", "change": 120}, {"name": "loadTime", "change": 860}, {"name": "renderDelay", "change": 0}]},
  "layoutShifts": [{"time": 1800, "score": 0.11, "baseScore": 0, "elements": [{"selector": "main > p.lead"}], "causes": [{"kind": "image", "url": "https://cdn.example.com/hero-4k.jpg"}]}],
  "longTasks": {"base": {"count": 2, "total": 140, "longest": 80}, "target": {"count": 5, "total": 610, "longest": 260},
   "scripts": [{"url": "https://tags.example.net/t.js", "base": {"count": 0, "total": 0, "longest": 0}, "target": {"count": 2, "total": 390, "longest": 260}, "change": 390},
    {"url": "", "base": {"count": 0, "total": 0, "longest": 0}, "target": {"count": 1, "total": 70, "longest": 70}, "change": 70}]}
 }
}`

func fixture(t *testing.T) pullrequest.Series {
	var c pullrequest.Comparison
	if err := json.Unmarshal([]byte(comparison), &c); err != nil {
		t.Fatal(err)
	}
	same := c
	same.Metrics = nil
	for _, m := range c.Metrics {
		m.Change, m.BeyondSpread = new(float64), false
		m.Base = m.Target
		same.Metrics = append(same.Metrics, m)
	}
	same.Loads = nil
	return pullrequest.Series{ID: "ts_1", Status: "completed", Description: "Deploy v2.1: hero image | new <b>tags</b>", Website: "site1",
		Link: "https://api.example.com/site1/testseries/ts_1", Dashboard: "https://api.example.com/app",
		Tests: []pullrequest.Test{
			{ID: "tt_new1", PageID: "pg_home", Page: "Home (/)", URL: "/", Device: "mobile", Method: "applied", Status: "completed", BudgetsExceeded: 1, Comparison: &c},
			{ID: "tt_new2", PageID: "pg_shop", Page: "/shop", URL: "/shop", Device: "desktop", Method: "applied", Status: "completed", BudgetsAtRisk: 1, Comparison: &same},
			{ID: "tt_new3", PageID: "pg_docs", Page: "/docs", URL: "/docs", Device: "desktop", Status: "failed", Error: "net::ERR_CONNECTION_REFUSED"},
		},
		Failures: []string{"Home (/) on mobile: performance_score 81, below the minimum 90", "1 budgets exceeded, at most 0 allowed"}}
}

// render turns the summary's Markdown into HTML as GitHub does (tables, raw HTML kept).
func render(t *testing.T, md string) string {
	var out bytes.Buffer
	if err := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe())).Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestRender: one row per test with each value against its base, the change beyond noise
// marked (LCP beyond the runs' spread, CLS and the score beyond the least change regression
// detection counts without a spread; TBT within noise unmarked), the causes of the page that
// regressed and none for the unchanged one, the links to the comparison, budgets, the failed
// test and the thresholds; the Markdown renders to one table and one details block.
func TestRender(t *testing.T) {
	s := pullrequest.Render(fixture(t))
	if s.Conclusion != "failure" || s.Title != "3 tests, 2 thresholds not met" {
		t.Errorf("title %q, conclusion %q", s.Title, s.Conclusion)
	}
	md := s.Markdown
	for _, want := range []string{
		pullrequest.Marker("site1"),
		"| Home (/) | mobile, applied | 81 (-15) 🔺 | 2300 ms (+900 ±80) 🔺 | 905 ms (+5 ±40) | 150 ms (+30 ±50) | 0.120 (+0.110) 🔺 | 120 ms (-80) 🟢 | 🔺 1 exceeded |",
		"| /shop | desktop, applied |", "⚠️ 1 at risk",
		"[compare](https://api.example.com/app#/w/site1/compare?base=tt_base1&device=mobile&page=pg_home&target=tt_new1)",
		"<b>Home (/)</b> on mobile: performance_score -15, lcp +900, cls +0.110",
		"- request added: `https://cdn.example.com/hero-4k.jpg` Image, +793 KiB",
		"- request slowed: `https://tags.example.net/t.js` Script, +240 ms, render-blocking, third party (Example Tags)",
		"- LCP element changed: `h1.title` → `img.hero`",
		"- LCP phases (`img.hero`): ttfb -80 ms, loadDelay +120 ms, loadTime +860 ms",
		"- new layout shift 0.110 at 1800 ms of `main > p.lead` (image https://cdn.example.com/hero-4k.jpg)",
		"- long tasks: 2 → 5, 140 → 610 ms in all (+470 ms), the longest 260 ms",
		"  - `https://tags.example.net/t.js`: +390 ms (0 → 2 tasks)",
		"  - tasks of no script: +70 ms (0 → 1 tasks)",
		"❌ **/docs** on desktop failed: net::ERR_CONNECTION_REFUSED",
		"Deploy v2.1: hero image \\| new &lt;b&gt;tags&lt;/b&gt;",
		"- 1 budgets exceeded, at most 0 allowed",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	if strings.Contains(md, "old.css") || strings.Contains(md, "<b>/shop</b>") || strings.Contains(md, "tbt +30") {
		t.Errorf("a removed request, a page without change or a change within noise among the causes:\n%s", md)
	}
	h := render(t, md)
	if strings.Count(h, "<table>") != 1 || strings.Count(h, "<tr>") != 4 || strings.Count(h, "<details>") != 1 || strings.Contains(h, "<b>tags") {
		t.Errorf("rendered HTML: %s", h)
	}
	if *screenshot {
		shoot(t, h, filepath.Join("..", "..", "docs", "screenshots", "pull-request-comment.png"))
	}
	if ok := pullrequest.Render(pullrequest.Series{Status: "completed", Website: "w"}); ok.Conclusion != "success" {
		t.Errorf("a series meeting every threshold: %+v", ok)
	}
}

// shoot renders the HTML in headless Chromium in GitHub's comment style and writes a PNG.
func shoot(t *testing.T, body, path string) {
	bin, err := browser.LookBin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "comment.html")
	style := `body{font:14px -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1f2328;max-width:1000px;margin:16px;padding:16px;border:1px solid #d0d7de;border-radius:6px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #d0d7de;padding:6px 10px}th{background:#f6f8fa}code{background:#eff1f3;padding:1px 4px;border-radius:4px;font-size:12px}
a{color:#0969da}h3{margin-top:0}details{margin:8px 0}`
	if err := os.WriteFile(page, []byte("<!doctype html><meta charset=utf-8><style>"+style+"</style><body>"+
		strings.Replace(body, "<details>", "<details open>", 1)+"</body>"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := launcher.New().Bin(bin).Leakless(false).Headless(true).NoSandbox(true).UserDataDir(filepath.Join(dir, "profile")).
		Set("disable-dev-shm-usage").Set("disable-gpu").Env(append(os.Environ(), "TMPDIR="+dir)...)
	u, err := l.Launch()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Cleanup()
	defer l.Kill()
	b := rod.New().ControlURL(u)
	if err := b.Connect(); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.Page(proto.TargetCreateTarget{URL: "file://" + page})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetViewport(&proto.EmulationSetDeviceMetricsOverride{Width: 1060, Height: 900, DeviceScaleFactor: 1}); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitLoad(); err != nil {
		t.Fatal(err)
	}
	png, err := p.Screenshot(true, &proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDeviceCell: a test names its device and method, and its base's method when it differs.
func TestDeviceCell(t *testing.T) {
	same := &pullrequest.Comparison{}
	same.Base.Method = "applied"
	switched := &pullrequest.Comparison{}
	switched.Base.Method = "simulated"
	for _, tc := range []struct {
		t    pullrequest.Test
		want string
	}{
		{pullrequest.Test{Device: "mobile"}, "mobile"},
		{pullrequest.Test{Device: "mobile", Method: "applied", Comparison: same}, "mobile, applied"},
		{pullrequest.Test{Device: "desktop", Method: "applied", Comparison: switched}, "desktop, applied (base: simulated)"},
	} {
		if got := pullrequest.DeviceCell(tc.t); got != tc.want {
			t.Errorf("DeviceCell(%+v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}
