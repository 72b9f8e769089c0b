package rumworker_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// BenchmarkRUMDailyExport stores a day of 100,000 page views (1,000 pages, 50 countries, the
// segments of BenchView) as the aggregator leaves them, then exports the website's day: it
// reports the rum_daily rows and Parquet bytes a day, for the storage priced in
// docs/exports.md. With -short, 5,000 views.
func BenchmarkRUMDailyExport(b *testing.B) {
	views := 100_000
	if testing.Short() {
		views = 5_000
	}
	st, site := benchWebsite(b)
	rums := awstest.RUM(b, st)
	const day = "20261120"
	fillDay(b, st, rums, site, day, views, rand.New(rand.NewPCG(7, 11)))
	objects := awstest.Bucket(b)
	ex := export.New(st, objects, rum.NewSegmentReader(rums, st), objects)
	ctx := context.Background()
	var res export.Result
	for b.Loop() {
		var err error
		if res, err = ex.Website(ctx, site, day); err != nil {
			b.Fatal(err)
		}
	}
	body, err := objects.Get(ctx, export.Key(export.RUMDaily, site.ID, day))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(res.Rows[export.RUMDaily]), "rows/day")
	b.ReportMetric(float64(len(body)), "bytes/day")
}
