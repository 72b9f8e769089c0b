package export_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/awstest"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/model"
)

// BenchmarkExportWebsiteDay exports a day of a website of 100 pages audited on both devices
// (30 lab metrics each, 3 runs' samples of 6, 8 opportunities; 5 user-experience vitals a
// page and device) on the stand-ins, and reports the bytes written a day and a page-day, for
// the storage and request prices in docs/exports.md. Under -short, 10 pages.
func BenchmarkExportWebsiteDay(b *testing.B) {
	ctx := context.Background()
	clients := awstest.Clients(b)
	st, objects := awstest.Store(b, clients), awstest.Bucket(b)
	site := model.Website{Account: "acme", Domain: "example.com"}
	if err := st.CreateWebsite(ctx, &site); err != nil {
		b.Fatal(err)
	}
	n := 100
	if testing.Short() {
		n = 10
	}
	pages := make([]model.Page, n)
	for i := range pages {
		pages[i] = model.Page{ID: model.NewID(), URL: fmt.Sprintf("/products/item-%04d", i)}
	}
	for start := 0; start < n; start += model.MaxPagesPerCall {
		if err := st.CreatePages(ctx, site, pages[start:min(start+model.MaxPagesPerCall, n)]); err != nil {
			b.Fatal(err)
		}
	}
	day := "20261120"
	at := time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)
	for i, p := range pages {
		for _, d := range export.Devices {
			m := map[string]float64{}
			for k := range 30 {
				m[fmt.Sprintf("metric_%02d", k)] = float64(1000 + i*7 + k)
			}
			samples := map[string][]float64{}
			for _, k := range []string{"fcp", "lcp", "cls", "tbt", "speed_index", "ttfb"} {
				samples[k] = []float64{float64(900 + i), float64(1000 + i), float64(1100 + i)}
			}
			var ops []model.Opportunity
			for k := range 8 {
				ops = append(ops, model.Opportunity{ID: fmt.Sprintf("audit-%d", k), Title: "t", Category: "performance"})
			}
			r := model.LabResult{Page: p.ID, Device: d, Day: day, Runs: 3, LighthouseVersion: "13.5.0", Audited: at, Metrics: m,
				Samples: samples, Opportunities: ops, ReportKey: "acme/" + site.ID + "/pages/" + p.ID + "/lighthouse/" + day + "-" + d + ".json.gz"}
			if err := st.PutLabResult(ctx, site, p, r); err != nil {
				b.Fatal(err)
			}
			v := map[string]model.Vital{}
			for _, k := range []string{"lcp", "inp", "cls", "fcp", "ttfb"} {
				v[k] = model.Vital{P75: float64(2000 + i), Good: 70, NeedsImprovement: 20, Poor: 10}
			}
			if err := st.PutUXResult(ctx, site, p, model.UXResult{Page: p.ID, Device: d, Day: day, Vitals: v, Collected: at}); err != nil {
				b.Fatal(err)
			}
		}
	}
	ex := export.New(st, objects)
	var res export.Result
	b.ResetTimer()
	for b.Loop() {
		var err error
		if res, err = ex.Website(ctx, site, day); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(res.Bytes), "bytes/day")
	b.ReportMetric(float64(res.Bytes)/float64(n), "bytes/page-day")
	b.ReportMetric(float64(res.Rows[export.LabRuns]), "lab-rows")
}
