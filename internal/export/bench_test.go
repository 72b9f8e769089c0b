package export_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// BenchmarkExportWebsiteDay exports a day of a website of 100 pages audited on both devices
// (30 lab metrics each, 3 runs' samples of 6, 8 opportunities, diagnostics of 80 requests of
// 6 types, 12 long tasks, 4 shifts and 8 kinds of main-thread work; 5 user-experience vitals
// a page and device) on the stand-ins, and reports the bytes written a day and a page-day, for
// the storage and request prices in docs/exports.md. Under -short, 10 pages.
func BenchmarkExportWebsiteDay(b *testing.B) {
	ctx := context.Background()
	clients := awstest.Clients(b)
	st, objects, reports := awstest.Store(b, clients), awstest.Bucket(b), awstest.Bucket(b)
	n := 100
	if testing.Short() {
		n = 10
	}
	pages := make([]model.Page, n)
	for i := range pages {
		pages[i] = model.Page{ID: model.NewID(), URL: fmt.Sprintf("/products/item-%04d", i)}
	}
	site, _ := awstest.Website(b, st, model.Website{Account: "acme", Domain: "example.com"}, pages)
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
			if err := reports.Put(ctx, artifact.DiagnosticsKey(r.ReportKey), benchDiagnostics(b, i), "application/gzip"); err != nil {
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
	ex := export.New(st, reports, rum.NewSegmentReader(awstest.RUM(b, st), st), objects)
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
	b.ReportMetric(float64(res.Rows[export.Diagnostics]), "diagnostics-rows")
}

// benchDiagnostics are gzipped diagnostics of a heavy page's load.
func benchDiagnostics(b *testing.B, i int) []byte {
	lcp, fcp, load, delay, dur := float64(1800+i), float64(900+i), float64(3000+i), 200.0, 600.0
	d := model.Diagnostics{URL: "https://example.com/", Marks: model.Marks{FCP: &fcp, LCP: &lcp, Load: &load},
		LCP: &model.LCP{Time: lcp, Selector: "main > div.hero > img", ImageURL: "https://example.com/img/hero.avif",
			Phases: model.LCPPhases{TTFB: 300, LoadDelay: &delay, LoadDuration: &dur, RenderDelay: lcp - 1100}},
		Document: model.DocumentTiming{DNS: 10, Connect: 30, TLS: 20, Wait: 250, Download: 12}}
	types := []string{"Document", "Script", "Stylesheet", "Image", "Font", "Fetch"}
	for k := range 80 {
		d.Requests = append(d.Requests, model.Request{URL: fmt.Sprintf("https://cdn%d.example.com/asset-%d", k%4, k), Start: float64(k * 20),
			End: float64(k*20 + 150), TransferSize: int64(2000 + 97*k), Type: types[k%len(types)], Status: 200, RenderBlocking: k < 4, ThirdParty: k%4 == 3})
	}
	for k := range 12 {
		d.LongTasks = append(d.LongTasks, model.LongTask{URL: "https://cdn3.example.com/asset-3", Start: float64(500 + 150*k), Duration: float64(50 + 13*k)})
	}
	for k := range 4 {
		d.Shifts = append(d.Shifts, model.LayoutShift{Time: float64(700 + 100*k), Score: 0.01 * float64(k+1)})
	}
	for _, c := range []string{"scriptEvaluation", "styleLayout", "paintCompositeRender", "parseHTML", "scriptParseCompile", "garbageCollection", "other", "domParse"} {
		d.MainThread = append(d.MainThread, model.WorkCategory{Category: c, Duration: float64(40 + i%50)})
	}
	d.ThirdParties = []model.ThirdParty{{Entity: "Ads", Requests: 20, TransferSize: 90_000, MainThreadTime: 300}}
	body, err := json.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	return awstest.Gzipped(b, body)
}
