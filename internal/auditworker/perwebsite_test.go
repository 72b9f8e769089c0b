package auditworker

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
)

// What an audit does once its result is stored (the page's summary, the budgets' statuses and
// their events, the page's regressions) must read the same whatever the number of the
// website's pages: these tests count its DynamoDB reads with awstest.CountedStore.

// eventLog keeps the events a Recorder queues.
type eventLog struct {
	mu     sync.Mutex
	events []model.Event
}

func (q *eventLog) Enqueue(_ context.Context, _ model.Website, ev model.Event) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.events = append(q.events, ev)
	return nil
}

func (q *eventLog) summaries() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]string, len(q.events))
	for i, ev := range q.events {
		out[i] = ev.Summary
	}
	return out
}

// sizedWebsite is a website of n pages, each with a result on both devices today and an open
// lab regression on mobile, and two budgets; its worker's store counts its reads.
type sizedWebsite struct {
	worker *Worker
	reads  *awstest.Reads
	site   model.Website
	pages  []model.Page
	queued *eventLog
}

// slowLCP is the lcp of every third page: over the lcp budget below.
const slowLCP = 3200

func newSizedWebsite(tb testing.TB, n int, log *slog.Logger) *sizedWebsite {
	tb.Helper()
	ctx := context.Background()
	st, reads := awstest.CountedStore(tb, awstest.Clients(tb))
	q := &eventLog{}
	rec := event.NewRecorder(st, q, log)
	w := NewWorker(WorkerConfig{Events: rec, Regressions: regression.NewWatcher(st, awstest.Bucket(tb), rec, log)},
		st, awstest.Bucket(tb), nil, log)
	site := model.Website{Account: "acme", Domain: "example.com"}
	if err := st.CreateWebsite(ctx, &site); err != nil {
		tb.Fatal(err)
	}
	pages := make([]model.Page, n)
	for i := range pages {
		pages[i].URL = fmt.Sprintf("/p/%d", i)
	}
	for start := 0; start < n; start += model.MaxPagesPerCall {
		if err := st.CreatePages(ctx, site, pages[start:min(n, start+model.MaxPagesPerCall)]); err != nil {
			tb.Fatal(err)
		}
	}
	for _, b := range []model.Budget{
		{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"},
		{Metric: "performance_score", Operator: "gt", Value: 50, Device: "mobile"},
	} {
		if err := st.CreateBudget(ctx, site, &b); err != nil {
			tb.Fatal(err)
		}
	}
	day := model.Day(time.Now())
	sem := make(chan struct{}, 8)
	errs := make(chan error, 2*n)
	var wg sync.WaitGroup
	for i, p := range pages {
		for _, device := range []string{"desktop", "mobile"} {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				_, err := w.storeResult(ctx, site, p, labResult(p, device, day, pageLCP(i)))
				errs <- err
			}()
		}
		r := model.Regression{Kind: model.KindRegression, Source: regression.SourceLab, Page: p.ID, Device: "mobile", Metric: "tbt",
			LastGood: model.Day(time.Now().AddDate(0, 0, -20)), FirstBad: model.Day(time.Now().AddDate(0, 0, -19)),
			Before: model.Level{Median: 100}, After: model.Level{Median: 300}, Delta: 200, Percent: 200, Status: model.RegressionOpen, Detected: time.Now()}
		r.ID = model.RegressionID(site, p.ID+"tbt", r.FirstBad)
		if _, err := st.PutRegression(ctx, site, r); err != nil {
			tb.Fatal(err)
		}
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

// pageLCP is page i's lcp: every third page is over the budget.
func pageLCP(i int) float64 {
	if i%3 == 0 {
		return slowLCP
	}
	return 1800
}

func labResult(p model.Page, device, day string, lcp float64) model.LabResult {
	return model.LabResult{Page: p.ID, Device: device, Day: day, Audited: time.Now().UTC(), Runs: 1,
		Metrics: map[string]float64{"lcp": lcp, "performance_score": 80, "tbt": 300},
		Samples: map[string][]float64{"lcp": {lcp}, "performance_score": {80}, "tbt": {300}}}
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
func TestFollowUpReadsDoNotGrowWithPages(t *testing.T) {
	log := awstest.Log(t)
	var counts []awstest.ReadCount
	for _, n := range []int{10, 100} {
		s := newSizedWebsite(t, n, log)
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
