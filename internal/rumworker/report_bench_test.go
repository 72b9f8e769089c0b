package rumworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/store"
)

// BenchmarkReport10M stores the running totals of 10 million page views (1,000 pages, 30 days,
// 50 countries) the way the aggregator leaves them, day by day with five timing metrics, in
// DynamoDB Local, then times reports over them; it reports p50 and p99 per kind of report.
func BenchmarkReport10M(b *testing.B) {
	const (
		totalViews = 10_000_000
		days       = 30
		pages      = 1000
		countries  = 50
	)
	metrics := []string{"lcp", "fcp", "inp", "cls", "ttfb"}
	st, site := benchWebsite(b)
	ctx := context.Background()

	start := time.Now()
	rng := rand.New(rand.NewPCG(5, 5))
	first := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	totals := rumworker.NewRunningTotals()
	var dayList []string
	var written, tables, largest int64
	for d := range days {
		day := first.AddDate(0, 0, d).Format("20060102")
		dayList = append(dayList, day)
		for range totalViews / days {
			totals.Add(rumworker.BenchView(rng, day, pages, countries), metrics)
		}
		w, n, big, err := totals.Store(ctx, st, site.Account, site.ID, day)
		if err != nil {
			b.Fatal(err)
		}
		written, tables, largest = written+w, tables+n, max(largest, big)
	}
	if err := st.PutRUMIndex(ctx, site.Account, site.ID, model.RUMIndex{Month: "202611", Days: dayList}); err != nil {
		b.Fatal(err)
	}
	b.Logf("stored %d page views as %d tables (%.1f MB in all, largest table %.0f KB) in %v",
		totalViews, tables, float64(written)/1e6, float64(largest)/1e3, time.Since(start).Round(time.Second))

	r := rum.NewReader(st)
	last := first.AddDate(0, 0, days-1)
	for _, kind := range []struct {
		name    string
		dim     string
		metrics []string
		from    time.Time
	}{
		{"pages", rum.DimPages, nil, first},
		{"pages_timing_lcp_inp_cls", rum.DimPages, []string{"lcp", "inp", "cls"}, first},
		{"pages_timing_5", rum.DimPages, metrics, first},
		{"countries_timing_lcp_inp_cls", rum.DimCountries, []string{"lcp", "inp", "cls"}, first},
		{"pages_days_10_to_20_lcp", rum.DimPages, []string{"lcp"}, first.AddDate(0, 0, 9)},
	} {
		b.Run(kind.name, func(b *testing.B) {
			q := rum.Query{Account: site.Account, Website: site.ID, Dim: kind.dim, Metrics: kind.metrics, From: kind.from, To: last}
			if kind.name == "pages_days_10_to_20_lcp" {
				q.To = first.AddDate(0, 0, 19)
			}
			var lat []time.Duration
			for range b.N {
				t0 := time.Now()
				rep, err := r.Report(ctx, q)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if q.From.Equal(first) && q.To.Equal(last) && rep.Views != totalViews/days*days {
					b.Fatalf("%d views, want %d", rep.Views, totalViews/days*days)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99_ms")
		})
	}
}

// BenchmarkAggregate folds batches of ten queue messages (1,000 pages, 50 countries, every
// timing metric) through the aggregator's handler into DynamoDB Local: the end-to-end rate of
// one aggregator, storage included (BenchmarkFold is its CPU part alone). Messages carry 400
// views (as the rebatcher fills them in AWS), 40 (collect's group commit in one busy process,
// as locally) or 1 (one Lambda invocation of collect, without the rebatcher).
func BenchmarkAggregate(b *testing.B) {
	for _, perMessage := range []int{400, 40, 1} {
		b.Run(fmt.Sprintf("views_per_message_%d", perMessage), func(b *testing.B) { benchAggregate(b, perMessage) })
	}
}

func benchAggregate(b *testing.B, perMessage int) {
	st, site := benchWebsite(b)
	ctx := context.Background()
	agg := rumworker.NewAggregatorWith(st, quota.NewKeeper(st, time.Now), awstest.Log(b), func(string) string { return "XX" })
	rng := rand.New(rand.NewPCG(9, 9))
	day := time.Now().UTC().Format("20060102")
	event := func(n int) events.SQSEvent {
		var ev events.SQSEvent
		for m := range 10 {
			batch := rum.Batch{ID: fmt.Sprintf("bench-%d-%d", n, m), Account: site.Account, Website: site.ID}
			for range perMessage {
				batch.Views = append(batch.Views, rumworker.BenchView(rng, day, 1000, 50))
			}
			body, _ := json.Marshal(batch)
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: batch.ID, Body: string(body)})
		}
		return ev
	}
	// Warm up: the tables exist, as they do after the first minutes of a day.
	for i := range 5 {
		if _, err := agg.HandleSQS(ctx, event(-1-i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		resp, err := agg.HandleSQS(ctx, event(i))
		if err != nil || len(resp.BatchItemFailures) > 0 {
			b.Fatalf("%v %v", err, resp.BatchItemFailures)
		}
	}
	b.ReportMetric(float64(b.N*10*perMessage)/time.Since(start).Seconds(), "beacons/s")
}

// benchWebsite is a website in a table of the benchmark's own.
func benchWebsite(b testing.TB) (*store.Store, model.Website) {
	st := awstest.Store(b, awstest.Clients(b))
	site := model.Website{Account: "bench", Domain: "example.com"}
	if err := st.CreateWebsite(context.Background(), &site); err != nil {
		b.Fatal(err)
	}
	return st, site
}
