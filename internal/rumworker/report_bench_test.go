package rumworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// BenchmarkReport10M stores 10 million page views (1,000 pages, 30 days, 50 countries, the
// segments and attribution of drawView) the way the aggregator leaves them, day by day: the
// running totals with five timing metrics and the daily segment and attribution tables, as day
// objects in S3 (gofakes3) with their pointers in DynamoDB Local, then times reports over them; it reports p50 and p99 per kind of report and
// the daily tables' storage per million views.
// With -short, 30,000 page views of 20 pages.
func BenchmarkReport10M(b *testing.B) {
	totalViews, pages := 10_000_000, 1000
	if testing.Short() {
		totalViews, pages = 30_000, 20
	}
	const (
		days      = 30
		countries = 50
	)
	metrics := []string{"lcp", "fcp", "inp", "cls", "ttfb"}
	st, site := benchWebsite(b)
	rums := awstest.RUM(b, st)
	ctx := context.Background()

	start := time.Now()
	rng := rand.New(rand.NewPCG(5, 5))
	first := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	totals := rumworker.NewRunningTotals()
	var dayList []string
	var written, tables, largest int64
	var dailyBytes, dailyTables int64
	for d := range days {
		day := first.AddDate(0, 0, d).Format("20060102")
		dayList = append(dayList, day)
		daily := rumworker.NewDailyTables(day)
		batch := make([]rum.View, 0, 4000)
		for range totalViews / days {
			v := rumworker.BenchView(rng, day, pages, countries)
			totals.Add(v, metrics)
			if batch = append(batch, v); len(batch) == cap(batch) {
				daily.Add(batch)
				batch = batch[:0]
			}
		}
		daily.Add(batch)
		sess := rums.Session(site.Account, site.ID)
		w, n, big, err := totals.Store(ctx, sess, day)
		if err != nil {
			b.Fatal(err)
		}
		written, tables, largest = written+w, tables+n, max(largest, big)
		w, n, err = daily.Store(ctx, sess)
		if err != nil {
			b.Fatal(err)
		}
		if err := sess.Commit(ctx, nil); err != nil {
			b.Fatal(err)
		}
		dailyBytes, dailyTables = dailyBytes+w, dailyTables+n
	}
	set, err := rum.ApplySettings(model.RUMSettings{}, model.RUMSettings{Groups: benchGroups()})
	if err != nil {
		b.Fatal(err)
	}
	if err := st.PutRUMSettings(ctx, site.Account, site.ID, set); err != nil {
		b.Fatal(err)
	}
	if err := st.PutRUMIndex(ctx, site.Account, site.ID, model.RUMIndex{Month: "202611", Days: dayList}, time.Time{}); err != nil {
		b.Fatal(err)
	}
	b.Logf("stored %d page views as %d tables (%.1f MB in all, largest table %.0f KB) and %d daily segment and attribution tables (%.1f MB, %.2f MB per million views) in %v",
		totalViews, tables, float64(written)/1e6, float64(largest)/1e3, dailyTables, float64(dailyBytes)/1e6,
		float64(dailyBytes)/1e6/(float64(totalViews)/1e6), time.Since(start).Round(time.Second))
	b.ReportMetric(float64(dailyBytes)/1e6/(float64(totalViews)/1e6), "daily_MB_per_million_views")

	last := first.AddDate(0, 0, days-1)
	seg := rum.NewSegmentReader(rums, st)
	for _, kind := range []struct {
		name string
		run  func(q rum.SegmentQuery) (uint64, error)
		q    rum.SegmentQuery
	}{
		{"trend_30d_lcp", trendViews(seg), rum.SegmentQuery{Metric: "lcp"}},
		{"trend_30d_inp_mobile", trendViews(seg), rum.SegmentQuery{Metric: "inp", Filters: []rum.Filter{{Dim: rum.DimDevice, Values: []string{"mobile"}}}}},
		{"trend_30d_lcp_group_by_country", trendViews(seg), rum.SegmentQuery{Metric: "lcp",
			Filters: []rum.Filter{{Dim: rum.DimGroup, Values: []string{"Section 1"}}}, By: rum.DimCountry}},
		{"trend_30d_lcp_3_segments_full", trendViews(seg), rum.SegmentQuery{Metric: "lcp", Filters: []rum.Filter{
			{Dim: rum.DimDevice, Values: []string{"mobile"}}, {Dim: rum.DimCountry, Values: []string{"AA"}}}, By: rum.DimBrowser}},
		{"distribution_30d_cls", func(q rum.SegmentQuery) (uint64, error) { d, err := seg.Distribution(ctx, q); return d.Views, err },
			rum.SegmentQuery{Metric: "cls"}},
		{"attributions_30d_lcp", attributionViews(seg), rum.SegmentQuery{Metric: "lcp"}},
		{"attributions_30d_inp_scripts", attributionViews(seg), rum.SegmentQuery{Metric: "inp"}},
		{"attributions_30d_lcp_mobile_group", attributionViews(seg), rum.SegmentQuery{Metric: "lcp", Filters: []rum.Filter{
			{Dim: rum.DimDevice, Values: []string{"mobile"}}, {Dim: rum.DimGroup, Values: []string{"Section 1"}}}}},
		{"trend_30d_lcp_monitored_page", trendViews(seg), rum.SegmentQuery{Metric: "lcp", Page: "page001"}},
	} {
		b.Run(kind.name, func(b *testing.B) {
			q := kind.q
			q.Account, q.Website, q.From, q.To = site.Account, site.ID, first, last
			var lat []time.Duration
			for range b.N {
				t0 := time.Now()
				views, err := kind.run(q)
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if views == 0 {
					b.Fatal("no views")
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99_ms")
		})
	}

	r := rum.NewReader(rums)
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
				if q.From.Equal(first) && q.To.Equal(last) && rep.Views != uint64(totalViews/days*days) {
					b.Fatalf("%d views, want %d", rep.Views, totalViews/days*days)
				}
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[(len(lat)*99)/100].Microseconds())/1000, "p99_ms")
		})
	}
}

// BenchmarkAggregate appends ten log entries (1,000 pages, 50 countries, every timing metric,
// segments and attribution) and compacts them through the aggregator into the day's object
// (S3 on gofakes3, pointers and log in DynamoDB Local): the end-to-end rate of one aggregator,
// storage included (BenchmarkFold is its CPU part alone). Entries carry 400 views (a minute of
// a website of 17 million views a month), 40 or 1. With -short, one warm-up compaction
// instead of five.
func BenchmarkAggregate(b *testing.B) {
	for _, perEntry := range []int{400, 40, 1} {
		b.Run(fmt.Sprintf("views_per_entry_%d", perEntry), func(b *testing.B) { benchAggregate(b, perEntry) })
	}
}

func benchAggregate(b *testing.B, perEntry int) {
	st, site := benchWebsite(b)
	rums := awstest.RUM(b, st)
	ctx := context.Background()
	agg := rumworker.NewAggregatorWith(st, rums, quota.NewKeeper(st, time.Now), awstest.Log(b), func(string) string { return "XX" })
	rng := rand.New(rand.NewPCG(9, 9))
	day := time.Now().UTC().Format("20060102")
	round := func(n int) {
		var chunks []model.RUMChunk
		for m := range 10 {
			batch := rum.Batch{Account: site.Account, Website: site.ID}
			for range perEntry {
				v := rumworker.BenchView(rng, day, 1000, 50)
				v.ID = rum.NewViewID(time.Now())
				batch.Views = append(batch.Views, v)
			}
			body, _ := json.Marshal(batch)
			var wire rum.WireBatch
			if err := json.Unmarshal(body, &wire); err != nil {
				b.Fatal(err)
			}
			data, err := rumworker.EncodeChunk(wire)
			if err != nil {
				b.Fatal(err)
			}
			chunks = append(chunks, model.RUMChunk{Account: site.Account, Website: site.ID,
				Key: rumstore.LogKey(time.Now(), fmt.Sprintf("bench-%d-%d", n, m)), Views: perEntry, Data: data})
		}
		if err := rums.Append(ctx, chunks); err != nil {
			b.Fatal(err)
		}
		if err := agg.Compact(ctx, site.Account, site.ID); err != nil {
			b.Fatal(err)
		}
	}
	// Warm up: the day's object exists, as it does after the first minutes of a day.
	warmUp := 5
	if testing.Short() {
		warmUp = 1
	}
	for i := range warmUp {
		round(-1 - i)
	}
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		round(i)
	}
	b.ReportMetric(float64(b.N*10*perEntry)/time.Since(start).Seconds(), "beacons/s")
}

// benchWebsite is a website in a table of the benchmark's own.
func benchWebsite(b testing.TB) (*store.Store, model.Website) {
	st := awstest.Store(b, awstest.Clients(b))
	site, _ := awstest.Website(b, st, model.Website{Account: "bench", Domain: "example.com"}, nil)
	return st, site
}

// benchGroups are the page groups of the benchmark's views (drawSegments gives section s the
// group 1 + s%10).
func benchGroups() []model.PageGroup {
	var groups []model.PageGroup
	for i := range 10 {
		groups = append(groups, model.PageGroup{Name: fmt.Sprintf("Section %d", i), Pattern: fmt.Sprintf("/section-%d/*", i)})
	}
	return groups
}

func trendViews(r *rum.SegmentReader) func(q rum.SegmentQuery) (uint64, error) {
	return func(q rum.SegmentQuery) (uint64, error) {
		t, err := r.Trend(context.Background(), q)
		var n uint64
		for _, d := range t.Days {
			n += d.Views
		}
		return n, err
	}
}

func attributionViews(r *rum.SegmentReader) func(q rum.SegmentQuery) (uint64, error) {
	return func(q rum.SegmentQuery) (uint64, error) {
		a, err := r.Attributions(context.Background(), q, 10)
		return a.Views, err
	}
}
