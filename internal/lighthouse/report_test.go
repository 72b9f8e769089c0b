package lighthouse

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// The inputs are real Lighthouse 13.5.0 reports of testdata/site (desktop) and of a refused
// connection (runtime error), trimmed by dropping screenshots, i18n, timing, entities, error
// stacks and the bulky details of data-only audits.
var goldens = []struct{ input, golden string }{
	{"lhr-desktop.json", "report-desktop.golden.json"},
	{"lhr-runtime-error.json", "report-runtime-error.golden.json"},
}

func TestParseGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.input, func(t *testing.T) {
			lhr, err := os.ReadFile(filepath.Join("testdata", g.input))
			if err != nil {
				t.Fatal(err)
			}
			r, err := parse(lhr)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			got, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", g.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Decode(%s) differs from %s (go test -update rewrites it):\n%s", g.input, g.golden, got)
			}
		})
	}
}

func readReport(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseDesktop checks the golden's key values one by one against the report, so a wrong
// golden cannot hide a wrong extraction.
func TestParseDesktop(t *testing.T) {
	r, err := parse(readReport(t, "lhr-desktop.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.LighthouseVersion != "13.5.0" || r.FormFactor != "desktop" || r.RuntimeError != nil {
		t.Errorf("version %q, form factor %q, runtime error %v", r.LighthouseVersion, r.FormFactor, r.RuntimeError)
	}
	if r.ThrottlingMethod != "simulate" || r.CPUSlowdown != 1 || r.BenchmarkIndex != 2849.5 {
		t.Errorf("throttling %q, CPU %v, benchmark index %v: want simulate, 1, 2849.5", r.ThrottlingMethod, r.CPUSlowdown, r.BenchmarkIndex)
	}
	if r.FinalURL != "http://127.0.0.1:8765/index.html" || r.FetchTime.IsZero() {
		t.Errorf("final URL %q, fetch time %v", r.FinalURL, r.FetchTime)
	}
	if len(r.Missing) != 0 {
		t.Errorf("Missing = %v, want none", r.Missing)
	}
	floats := []struct {
		name string
		got  *float64
		want float64
	}{
		{"FCP", r.FCP, 290.027},
		{"LCP", r.LCP, 410.027},
		{"CLS", r.CLS, 0.065169},
		{"TBT", r.TBT, 0},
		{"SpeedIndex", r.SpeedIndex, 290.027},
		{"TTFB", r.TTFB, 125},
		{"TTI", r.TTI, 410.02700000000004},
		{"Performance", r.Performance, 99},
		{"Accessibility", r.Accessibility, 93},
		{"BestPractices", r.BestPractices, 96},
		{"SEO", r.SEO, 100},
		{"KBTotal", r.KBTotal, 148007.0 / 1024},
		{"CPUTotal", r.CPUTotal, 128.8710000000001},
		{"DOMReady", r.DOMReady, 5},
		{"OnLoad", r.OnLoad, 96},
		{"ServerTime", r.ServerTime, 6},
	}
	for _, f := range floats {
		if f.got == nil || *f.got != f.want {
			t.Errorf("%s = %v, want %v", f.name, deref(f.got), f.want)
		}
	}
	if r.DOMElements == nil || *r.DOMElements != 26 || r.DOMMaxDepth == nil || *r.DOMMaxDepth != 6 {
		t.Errorf("DOMElements %v, DOMMaxDepth %v, want 26 and 6", derefInt(r.DOMElements), derefInt(r.DOMMaxDepth))
	}
	wantNet := NetworkBytes{Total: 147487, Document: 1435, Image: 144874, Script: 682, CSS: 496, Requests: 4}
	if r.Network == nil || *r.Network != wantNet {
		t.Errorf("Network = %+v, want %+v", r.Network, wantNet)
	}

	// Failed audits of this report: five performance insights (three with scoreDisplayMode
	// metricSavings, two numeric), listitem (accessibility) and errors-in-console (best practices).
	want := map[string]string{
		"cache-insight":                   CategoryPerformance,
		"image-delivery-insight":          CategoryPerformance,
		"lcp-discovery-insight":           CategoryPerformance,
		"network-dependency-tree-insight": CategoryPerformance,
		"render-blocking-insight":         CategoryPerformance,
		"listitem":                        CategoryAccessibility,
		"errors-in-console":               CategoryBestPractices,
	}
	got := map[string]string{}
	for _, o := range r.Opportunities {
		got[o.ID] = o.Category
		if o.Title == "" || o.Description == "" || o.Score >= 0.9 {
			t.Errorf("opportunity %+v: want a title, a description and a failing score", o)
		}
	}
	if len(got) != len(r.Opportunities) || !mapsEqual(got, want) {
		t.Errorf("opportunities = %v, want %v", got, want)
	}
	for _, o := range r.Opportunities {
		if o.ID == "render-blocking-insight" && o.DisplayValue != "Est savings of 90\u00a0ms" { // Lighthouse puts a no-break space before units
			t.Errorf("render-blocking-insight display value %q", o.DisplayValue)
		}
	}

	// Savings as the report estimates them: render-blocking-insight's metricSavings FCP 100
	// (its display value rounds the observed 90 ms), cache-insight's and
	// image-delivery-insight's wasted bytes from their debugData (143 KiB and 24 KiB shown).
	savings := map[string]struct {
		ms, bytes float64
		metric    map[string]float64
	}{
		"render-blocking-insight": {100, 0, map[string]float64{"FCP": 100, "LCP": 0}},
		"cache-insight":           {100, 146052, map[string]float64{"FCP": 0, "LCP": 100}},
		"image-delivery-insight":  {0, 24684, map[string]float64{"FCP": 0, "LCP": 0}},
		"errors-in-console":       {0, 0, nil},
	}
	for _, o := range r.Opportunities {
		w, ok := savings[o.ID]
		if ok && (o.SavingsMs != w.ms || o.SavingsBytes != w.bytes || !maps.Equal(o.MetricSavings, w.metric)) {
			t.Errorf("%s savings %v ms, %v bytes, %v; want %v, %v, %v", o.ID, o.SavingsMs, o.SavingsBytes, o.MetricSavings, w.ms, w.bytes, w.metric)
		}
	}
}

func TestParseRuntimeError(t *testing.T) {
	r, err := parse(readReport(t, "lhr-runtime-error.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r.RuntimeError == nil || r.RuntimeError.Code != "CHROME_INTERSTITIAL_ERROR" || r.RuntimeError.Message == "" {
		t.Fatalf("RuntimeError = %+v", r.RuntimeError)
	}
	// Every value is missing: none may come back as a plausible-looking 0.
	for _, p := range []*float64{r.FCP, r.LCP, r.CLS, r.TBT, r.SpeedIndex, r.TTFB, r.TTI, r.Performance,
		r.Accessibility, r.BestPractices, r.SEO, r.KBTotal, r.CPUTotal, r.DOMReady, r.OnLoad, r.ServerTime} {
		if p != nil {
			t.Errorf("a metric is %v in a report with a runtime error", *p)
		}
	}
	if r.DOMElements != nil || r.DOMMaxDepth != nil || r.Network != nil {
		t.Errorf("DOM or network values present: %v %v %v", r.DOMElements, r.DOMMaxDepth, r.Network)
	}
	wantMissing := []string{"fcp", "lcp", "cls", "tbt", "speed_index", "ttfb", "tti", "performance_score",
		"accessibility_score", "best_practices_score", "seo_score", "kb_total", "cpu_total", "dom_ready",
		"on_load", "dom_elements", "dom_max_depth", "server_time", "network"}
	if !slices.Equal(r.Missing, wantMissing) {
		t.Errorf("Missing = %v, want %v", r.Missing, wantMissing)
	}
	if len(r.Opportunities) != 0 {
		t.Errorf("opportunities from errored audits: %+v", r.Opportunities)
	}
}

// TestParseEdges uses a hand-made report for what the real ones do not show: an errored audit
// beside a real 0, a not-applicable insight, informative and manual audits, hidden groups.
func TestParseEdges(t *testing.T) {
	lhr := `{
	  "lighthouseVersion": "13.5.0",
	  "requestedUrl": "https://example.com/",
	  "mainDocumentUrl": "https://example.com/home",
	  "configSettings": {"formFactor": "mobile"},
	  "audits": {
	    "first-contentful-paint": {"id": "first-contentful-paint", "score": 1, "scoreDisplayMode": "numeric", "numericValue": 800},
	    "largest-contentful-paint": {"id": "largest-contentful-paint", "score": null, "scoreDisplayMode": "error", "errorMessage": "NO_LCP"},
	    "cumulative-layout-shift": {"id": "cumulative-layout-shift", "score": 1, "scoreDisplayMode": "numeric", "numericValue": 0},
	    "dom-size-insight": {"id": "dom-size-insight", "score": null, "scoreDisplayMode": "notApplicable"},
	    "metrics": {"id": "metrics", "details": {"type": "debugdata", "items": [{"timeToFirstByte": 0, "observedLoad": 1200}]}},
	    "resource-summary": {"id": "resource-summary", "details": {"type": "table", "items": [
	      {"resourceType": "total", "transferSize": 1000}, {"resourceType": "third-party", "transferSize": 400},
	      {"resourceType": "stylesheet", "transferSize": 100}]}},
	    "render-blocking-insight": {"id": "render-blocking-insight", "title": "Render blocking", "description": "d", "score": 0, "scoreDisplayMode": "metricSavings", "displayValue": "Est savings of 300 ms"},
	    "image-delivery-insight": {"id": "image-delivery-insight", "title": "Images", "description": "d", "score": 0.5, "scoreDisplayMode": "metricSavings"},
	    "lcp-breakdown-insight": {"id": "lcp-breakdown-insight", "title": "LCP", "description": "d", "score": null, "scoreDisplayMode": "informative"},
	    "bootup-time": {"id": "bootup-time", "title": "JS", "description": "d", "score": 0.89, "scoreDisplayMode": "numeric"},
	    "unused-css-rules": {"id": "unused-css-rules", "title": "CSS", "description": "d", "score": 0.9, "scoreDisplayMode": "metricSavings"},
	    "redirects": {"id": "redirects", "title": "Redirects", "description": "d", "score": 0, "scoreDisplayMode": "metricSavings"},
	    "document-title": {"id": "document-title", "title": "Title", "description": "d", "score": 0, "scoreDisplayMode": "binary"},
	    "errors-in-console": {"id": "errors-in-console", "title": "Console", "description": "d", "score": 0, "scoreDisplayMode": "binary"},
	    "custom-controls-labels": {"id": "custom-controls-labels", "title": "Manual", "description": "d", "score": null, "scoreDisplayMode": "manual"},
	    "tabindex": {"id": "tabindex", "title": "Tabindex", "description": "d", "score": 0, "scoreDisplayMode": "binary"}
	  },
	  "categories": {
	    "performance": {"score": 0.755, "auditRefs": [
	      {"id": "first-contentful-paint", "group": "metrics"}, {"id": "largest-contentful-paint", "group": "metrics"},
	      {"id": "render-blocking-insight", "group": "insights"}, {"id": "image-delivery-insight", "group": "insights"},
	      {"id": "lcp-breakdown-insight", "group": "insights"}, {"id": "bootup-time", "group": "diagnostics"},
	      {"id": "unused-css-rules", "group": "diagnostics"}, {"id": "redirects", "group": "hidden"},
	      {"id": "no-such-audit", "group": "insights"}]},
	    "accessibility": {"score": null, "auditRefs": [{"id": "custom-controls-labels"}, {"id": "tabindex", "group": "hidden"}]},
	    "best-practices": {"score": 0.5, "auditRefs": [{"id": "errors-in-console", "group": "best-practices-general"}]},
	    "seo": {"score": 0, "auditRefs": [{"id": "document-title", "group": "seo-content"}]}
	  }
	}`
	r, err := parse([]byte(lhr))
	if err != nil {
		t.Fatal(err)
	}
	if r.FinalURL != "https://example.com/home" || r.FormFactor != "mobile" {
		t.Errorf("FinalURL %q FormFactor %q", r.FinalURL, r.FormFactor)
	}
	if r.LCP != nil || !slices.Contains(r.Missing, "lcp") {
		t.Errorf("errored LCP: %v, Missing %v", deref(r.LCP), r.Missing)
	}
	// A measured 0 is a value, not a gap.
	if r.CLS == nil || *r.CLS != 0 || r.TTFB == nil || *r.TTFB != 0 || slices.Contains(r.Missing, "cls") {
		t.Errorf("CLS %v TTFB %v Missing %v", deref(r.CLS), deref(r.TTFB), r.Missing)
	}
	if r.OnLoad == nil || *r.OnLoad != 1200 || r.DOMReady != nil || !slices.Contains(r.Missing, "dom_ready") {
		t.Errorf("OnLoad %v DOMReady %v", deref(r.OnLoad), deref(r.DOMReady))
	}
	if r.DOMElements != nil || r.DOMMaxDepth != nil || !slices.Contains(r.Missing, "dom_elements") || !slices.Contains(r.Missing, "dom_max_depth") {
		t.Errorf("not-applicable dom-size-insight: %v %v %v", r.DOMElements, r.DOMMaxDepth, r.Missing)
	}
	if r.Performance == nil || *r.Performance != 76 || r.Accessibility != nil || r.SEO == nil || *r.SEO != 0 {
		t.Errorf("scores %v %v %v", deref(r.Performance), deref(r.Accessibility), deref(r.SEO))
	}
	if want := (NetworkBytes{Total: 1000, ThirdParty: 400, CSS: 100}); r.Network == nil || *r.Network != want {
		t.Errorf("Network %+v", r.Network)
	}
	var ids []string
	for _, o := range r.Opportunities {
		ids = append(ids, o.Category+"/"+o.ID)
	}
	// Not: metrics-group and hidden-group audits, informative, manual, passing (score 0.9),
	// hidden accessibility audits, or refs to audits the report lacks.
	want := []string{
		"performance/render-blocking-insight", "performance/image-delivery-insight", "performance/bootup-time",
		"best_practices/errors-in-console", "seo/document-title",
	}
	if !slices.Equal(ids, want) {
		t.Errorf("opportunities %v, want %v", ids, want)
	}
	if r.Opportunities[0].DisplayValue != "Est savings of 300 ms" || r.Opportunities[1].Score != 0.5 {
		t.Errorf("first opportunities %+v", r.Opportunities[:2])
	}
}

func TestParseRejectsNonReports(t *testing.T) {
	for _, in := range []string{"", "not json", "{}", `{"lighthouseVersion": "13.5.0"}`, `{"audits": {}}`, "[]"} {
		if r, err := parse([]byte(in)); err == nil {
			t.Errorf("Decode(%q) = %+v, want an error", in, r)
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func derefInt(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// parse is a result's report, decoded.
func parse(lhr []byte) (*Report, error) {
	r, err := Decode(lhr)
	if err != nil {
		return nil, err
	}
	return r.Report(), nil
}
