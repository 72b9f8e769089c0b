package api_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// BenchmarkPagesAtScale measures the pages list, the website's opportunities and a page's
// detail on websites of 1,000 and 10,000 pages with 30 days of lab results on both devices (the
// goals: the whole list and the opportunities p99 < 300 ms at 1,000 pages; limit=100 p99 <
// 100 ms and the detail p99 < 50 ms at 10,000), and the Prometheus scrape of the 1,000 pages
// (GET /{w}/metrics, the same rows read). Each website is seeded once for its calls.
// Seeding takes minutes, so it runs only with OPENVITALS_BENCH_PAGES=1 (make bench-pages), or
// with -short on small websites (make test).
func BenchmarkPagesAtScale(b *testing.B) {
	if os.Getenv("OPENVITALS_BENCH_PAGES") == "" && !testing.Short() {
		b.Skip("set OPENVITALS_BENCH_PAGES=1 (make bench-pages): seeding takes minutes")
	}
	small, large, dated := 1000, 10000, 100
	if testing.Short() {
		small, large, dated = 10, 120, 3
	}
	type call struct {
		name string
		path func(site, page string) string
	}
	for _, tc := range []struct {
		pages, dated int // pages, and how many of them (the first) have 30 days of results
		calls        []call
	}{
		{small, small, []call{
			{"list", func(s, _ string) string { return "/" + s + "/pages" }},
			{"opportunities", func(s, _ string) string { return "/" + s + "/opportunities" }},
			{"metrics", func(s, _ string) string { return "/" + s + "/metrics" }},
		}},
		{large, dated, []call{
			{"list_limit_100", func(s, _ string) string { return "/" + s + "/pages?limit=100" }},
			{"detail", func(s, p string) string { return "/" + s + "/pages/" + p + "?device=mobile" }},
		}},
	} {
		b.Run(fmt.Sprintf("%dpages", tc.pages), func(b *testing.B) {
			e, site, first := benchSeedPages(b, tc.pages, tc.dated)
			for _, c := range tc.calls {
				b.Run(c.name, func(b *testing.B) {
					path := c.path(site, first)
					size := 0
					benchLoop(b, func(int) { size = e.benchCall(b, "GET", path, "", http.StatusOK).Body.Len() })
					b.ReportMetric(float64(size)/1e6, "MB/response")
				})
			}
		})
	}
}

// benchSeedPages makes a website of n pages, the first dated of which have a lab result on
// each device for each of the last 30 days, and returns the API over it, the website and its
// first page.
func benchSeedPages(b *testing.B, n, dated int) (*benchEnv, string, string) {
	b.Helper()
	ctx := context.Background()
	clients := awstest.Clients(b)
	st := awstest.Store(b, clients)
	srv := api.New(api.Deps{Store: st, Log: awstest.Log(b)})
	e := &benchEnv{handler: srv.Handler(), key: apikey.Generate()}
	if err := apikey.Provision(ctx, st, apikey.Grant{Account: "bench", Role: model.RoleAdmin, Key: e.key}, "bench"); err != nil {
		b.Fatal(err)
	}
	if err := st.SetAccountLimits(ctx, "bench", map[string]int{string(quota.PagesPerWebsite): n}); err != nil {
		b.Fatal(err)
	}
	site, _ := awstest.Website(b, st, model.Website{Account: "bench", Domain: "example.com", DisplayName: "Example"}, nil)
	start := time.Now()
	var pages []model.Page
	for i := 0; i < n; i += model.MaxPagesPerCall {
		batch := make([]model.Page, 0, model.MaxPagesPerCall)
		for j := i; j < min(i+model.MaxPagesPerCall, n); j++ {
			batch = append(batch, model.Page{URL: "/section-" + strconv.Itoa(j%20) + "/page-" + strconv.Itoa(j), Alias: "Page " + strconv.Itoa(j)})
		}
		if err := st.CreatePages(ctx, site, batch); err != nil {
			b.Fatal(err)
		}
		pages = append(pages, batch...)
	}
	type job struct {
		page   model.Page
		device string
		day    time.Time
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var failed error
	var once sync.Once
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r := model.LabResult{Device: j.device, Day: model.Day(j.day), Audited: j.day, Runs: 3, Metrics: benchLabMetrics(j.day.YearDay()),
					LighthouseVersion: "13.5.0", Opportunities: benchOpportunities}
				if err := st.PutLabResult(ctx, site, j.page, r); err != nil {
					once.Do(func() { failed = err })
				}
			}
		}()
	}
	now := time.Now().UTC()
	for _, p := range pages[:dated] {
		for _, d := range []string{"desktop", "mobile"} {
			for back := range 30 {
				jobs <- job{p, d, now.AddDate(0, 0, -back)}
			}
		}
	}
	close(jobs)
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	// The audit worker makes a page's summary after storing its result; so does this, once
	// per page, after storing them all.
	summaries := metrics.NewReader(st, time.Now)
	refresh := make(chan model.Page)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range refresh {
				if _, err := summaries.Refresh(ctx, site, p); err != nil {
					once.Do(func() { failed = err })
				}
			}
		}()
	}
	for _, p := range pages[:dated] {
		refresh <- p
	}
	close(refresh)
	wg.Wait()
	if failed != nil {
		b.Fatal(failed)
	}
	b.Logf("seeded %d pages, %d with 30 days on both devices (%d lab results), in %s", n, dated, dated*60, time.Since(start).Round(time.Second))
	b.ResetTimer()
	return e, site.ID, fmt.Sprint(pages[0].ID)
}

// benchLabMetrics are the 31 fields a real audit stores, varying from day to day as real
// measurements do (a few percent), so that summaries are as large as real ones.
func benchLabMetrics(day int) map[string]float64 {
	jitter := func(v float64, pct int) float64 { return v * (1 + float64((day*7919)%(2*pct+1)-pct)/100) }
	return map[string]float64{
		"fcp": jitter(912, 8), "lcp": jitter(1843, 10), "cls": jitter(0.0213, 20), "tbt": jitter(127, 30), "ttfb": jitter(312, 15),
		"speed_index": jitter(1534, 10), "tti": jitter(2561, 10), "performance_score": jitter(88, 3), "accessibility_score": 95,
		"best_practices_score": 96, "seo_score": 92, "kb_total": jitter(913, 2), "cpu_total": jitter(812, 12),
		"dom_ready": jitter(1012, 10), "on_load": jitter(1987, 10), "dom_elements": 734, "dom_max_depth": 17,
		"dns_time": jitter(21, 40), "connect_time": jitter(43, 30), "server_time": jitter(187, 20), "transfer_time": jitter(12, 50),
		"validation_errors": 3, "bytes_total": jitter(934912, 2), "bytes_doc": jitter(31245, 3), "bytes_image": jitter(512334, 2),
		"bytes_js": jitter(298112, 1), "bytes_css": jitter(41223, 1), "bytes_font": 48120, "bytes_media": 0,
		"bytes_other": jitter(3878, 5), "bytes_thirdparty": jitter(112334, 4),
	}
}

// benchOpportunities are a typical audit's failed audits with their estimated savings (they
// count in the list, and the website's opportunities list them).
var benchOpportunities = []model.Opportunity{
	{ID: "render-blocking-insight", Title: "Render blocking requests", Category: "performance", Description: "Requests are blocking the page's initial render.",
		SavingsMs: 310, MetricSavings: map[string]float64{"FCP": 310, "LCP": 310}},
	{ID: "image-delivery-insight", Title: "Improve image delivery", Category: "performance", Description: "Reducing the download time of images can improve LCP.",
		SavingsMs: 450, SavingsBytes: 148213, MetricSavings: map[string]float64{"FCP": 0, "LCP": 450}},
	{ID: "unused-javascript", Title: "Reduce unused JavaScript", Category: "performance", Description: "Reduce unused JavaScript and defer loading scripts.",
		SavingsMs: 150, SavingsBytes: 61234, MetricSavings: map[string]float64{"FCP": 0, "LCP": 150}},
	{ID: "cls-culprits-insight", Title: "Layout shift culprits", Category: "performance", Description: "Layout shifts occur when elements move absent any user interaction.",
		MetricSavings: map[string]float64{"CLS": 0.0213}},
	{ID: "color-contrast", Title: "Background and foreground colors do not have a sufficient contrast ratio.", Category: "accessibility", Description: "Low-contrast text is difficult or impossible for many users to read."},
	{ID: "meta-description", Title: "Document does not have a meta description", Category: "seo", Description: "Meta descriptions may be included in search results."},
}
