package auditworker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/eventtest"
)

// What an audit does once its result is stored (the page's summary, the budgets' statuses and
// their events, the page's regressions) must read the same whatever the number of the
// website's pages: these tests count its DynamoDB reads with awstest.CountedStore.

// sizedWebsite is a website of n pages with days of results each on both devices (their rows'
// summaries, as the audit worker makes them) and an open lab regression each, and two
// budgets; its worker's store counts its reads.
type sizedWebsite struct {
	worker *Worker
	reads  *awstest.Reads
	site   model.Website
	pages  []model.Page
	queued *eventtest.Queue
}

func newSizedWebsite(tb testing.TB, n, days int, log *slog.Logger) *sizedWebsite {
	tb.Helper()
	ctx := context.Background()
	st, reads := awstest.CountedStore(tb, awstest.Clients(tb))
	q := &eventtest.Queue{}
	rec := event.NewRecorder(st, q, log)
	w := NewWorker(WorkerConfig{Events: rec, Regressions: regression.NewWatcher(st, artifact.New(awstest.Bucket(tb)), rec, log)},
		st, awstest.Bucket(tb), nil, log)
	pages := make([]model.Page, n)
	for i := range pages {
		pages[i].URL = fmt.Sprintf("/p/%d", i)
	}
	site, _ := awstest.Website(tb, st, model.Website{Account: "acme", Domain: "example.com"}, pages)
	for _, b := range []model.Budget{
		{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"},
		{Metric: "performance_score", Operator: "gt", Value: 50, Device: "mobile"},
	} {
		if err := st.CreateBudget(ctx, site, &b); err != nil {
			tb.Fatal(err)
		}
	}
	now := time.Now().UTC()
	sem := make(chan struct{}, 8)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i, p := range pages {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs <- seedPage(ctx, st, site, p, days, now, pageLCP(i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			tb.Fatal(err)
		}
	}
	return &sizedWebsite{worker: w, reads: reads, site: site, pages: pages, queued: q}
}

// seedPage gives a page the summary of days of results on both devices, as the audit worker
// makes it (writing the results themselves would take minutes at 1,000 pages), and an open lab
// regression.
func seedPage(ctx context.Context, st *store.Store, site model.Website, p model.Page, days int, now time.Time, lcp float64) error {
	var ls []metrics.Listing
	for _, device := range metrics.Devices {
		s := metrics.Series{Page: p, Device: device}
		for d := days - 1; d >= 0; d-- {
			s.Lab = append(s.Lab, labResult(p, device, model.Day(now.AddDate(0, 0, -d)), lcp*(1+0.01*float64(d%5))))
		}
		ls = append(ls, s.Listing())
	}
	summary, err := metrics.EncodeSummary(ls)
	if err != nil {
		return err
	}
	opps, err := metrics.EncodeOpportunities(ls)
	if err != nil {
		return err
	}
	row, err := st.PageRow(ctx, site, p)
	if err != nil {
		return err
	}
	if err := st.PutPageSummary(ctx, site, p, row.Version, summary, opps); err != nil {
		return err
	}
	r := model.Regression{Kind: model.KindRegression, Source: regression.SourceLab, Page: p.ID, Device: "mobile", Metric: "tbt",
		LastGood: model.Day(now.AddDate(0, 0, -20)), FirstBad: model.Day(now.AddDate(0, 0, -19)),
		Before: model.Level{Median: 100}, After: model.Level{Median: 300}, Delta: 200, Percent: 200, Status: model.RegressionOpen, Detected: now}
	r.ID = model.RegressionID(site, p.ID+"tbt", r.FirstBad)
	_, err = st.PutRegression(ctx, site, r)
	return err
}

// pageLCP is page i's lcp: every third page is over the budget.
func pageLCP(i int) float64 {
	if i%3 == 0 {
		return 3200
	}
	return 1800
}

// labResult is a result with the fields and opportunities a real audit stores.
func labResult(p model.Page, device, day string, lcp float64) model.LabResult {
	m := map[string]float64{"lcp": lcp, "fcp": lcp * 0.6, "cls": 0.02, "tbt": 300, "ttfb": 210, "tti": lcp * 1.4, "speed_index": lcp * 0.9,
		"performance_score": 80, "accessibility_score": 92, "best_practices_score": 96, "seo_score": 100,
		"kb_total": 1480, "cpu_total": 1250, "dom_ready": lcp * 0.7, "on_load": lcp * 1.2, "dom_elements": 812, "dom_max_depth": 17,
		"dns_time": 12, "connect_time": 30, "server_time": 160, "transfer_time": 8, "validation_errors": 3, "opportunities": 5,
		"bytes_total": 1515520, "bytes_doc": 40960, "bytes_image": 716800, "bytes_js": 512000, "bytes_css": 61440,
		"bytes_font": 122880, "bytes_media": 0, "bytes_other": 61440, "bytes_thirdparty": 307200}
	samples := map[string][]float64{}
	for k, v := range m {
		samples[k] = []float64{v * 0.97, v, v * 1.04}
	}
	var opps []model.Opportunity
	for _, id := range []string{"render-blocking-insight", "image-delivery-insight", "unused-javascript", "cls-culprits-insight", "color-contrast"} {
		opps = append(opps, model.Opportunity{ID: id, Title: id, Category: "performance", DisplayValue: "Est savings of 120 KiB",
			SavingsMs: 340, SavingsBytes: 122880, MetricSavings: map[string]float64{"LCP": 300, "FCP": 150}})
	}
	return model.LabResult{Page: p.ID, Device: device, Day: day, Audited: time.Now().UTC(), Runs: 3, LighthouseVersion: "13.5.0",
		Metrics: m, Samples: samples, Opportunities: opps}
}

// audited stores a new result of page i on device, as an audit does, and follows it up; it
// returns what that read.
func (s *sizedWebsite) audited(tb testing.TB, i int, device string, lcp float64) awstest.ReadCount {
	tb.Helper()
	ctx := context.Background()
	s.reads.Reset()
	listings, err := s.worker.storeResult(ctx, s.site, s.pages[i], labResult(s.pages[i], device, model.Day(time.Now()), lcp))
	if err != nil {
		tb.Fatal(err)
	}
	s.worker.followUp(ctx, s.site, s.pages[i], device, listings, slog.New(slog.DiscardHandler))
	return s.reads.Count()
}

// TestFollowUpReadsDoNotGrowWithPages: an audit of one page of a website of 100 pages reads
// what the same audit reads in a website of 10 pages: the same requests, items and capacity.
// The day's first audit reads every page's row, once.
func TestFollowUpReadsDoNotGrowWithPages(t *testing.T) {
	log := awstest.Log(t)
	var counts []awstest.ReadCount
	for _, n := range []int{10, 100} {
		s := newSizedWebsite(t, n, 3, log)
		s.audited(t, 1, "mobile", 1800) // the day's first audit since the budgets were made
		c := s.audited(t, 2, "mobile", 1800)
		t.Logf("%d pages: %s", n, c)
		counts = append(counts, c)
	}
	small, large := counts[0], counts[1]
	if small.Requests() != large.Requests() || small.Items != large.Items || small.Units != large.Units {
		t.Errorf("an audit reads %s with 10 pages and %s with 100: it grows with the pages", small, large)
	}
}

// BenchmarkFollowUpReads counts what an audit reads once its result is stored (its page's
// summary made again, the budgets' statuses and their events, the page's regressions) in a
// website of 10, 100 and 1,000 pages (10 with -short), each with 30 days of results on both
// devices, an open regression and two budgets: the day's first audit apart (first-*), then
// audits of the other pages, each over a budget on every third (per audit: */op). Figures in
// BENCHMARKS.md ("Reads per audit").
func BenchmarkFollowUpReads(b *testing.B) {
	sizes := []int{10, 100, 1000}
	if testing.Short() {
		sizes = sizes[:1]
	}
	log := slog.New(slog.DiscardHandler)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("%dpages", n), func(b *testing.B) {
			s := newSizedWebsite(b, n, 30, log)
			first := s.audited(b, 0, "mobile", 3200)
			var sum awstest.ReadCount
			audits := 0
			for b.Loop() {
				i := 1 + audits%(n-1)
				sum = sum.Plus(s.audited(b, i, []string{"desktop", "mobile"}[audits%2], pageLCP(audits)))
				audits++
			}
			per := float64(audits)
			b.ReportMetric(float64(sum.Requests())/per, "reads/op")
			b.ReportMetric(float64(sum.Items)/per, "items/op")
			b.ReportMetric(sum.Units/per, "RCU/op")
			b.ReportMetric(float64(sum.Writes)/per, "writes/op")
			b.ReportMetric(float64(first.Requests()), "first-reads")
			b.ReportMetric(float64(first.Items), "first-items")
			b.ReportMetric(first.Units, "first-RCU")
			b.Logf("%d pages: the day's first audit %s; then per audit %.1f reads, %.1f items, %.1f RCU, %.1f writes",
				n, first, float64(sum.Requests())/per, float64(sum.Items)/per, sum.Units/per, float64(sum.Writes)/per)
		})
	}
}
