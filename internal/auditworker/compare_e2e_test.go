package auditworker_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestComparisonEndToEnd audits a page for real (audit worker, Chromium, Lighthouse, desktop)
// before and after a deploy adds a 300 KB script to its head, as two days of its series: the
// comparison of the two days finds the script added, and the regression detected on the
// change links to that comparison and names the script first in its cause, from the two
// days' diagnostics.
func TestComparisonEndToEnd(t *testing.T) {
	e := newBenchEnv(t)
	ctx := context.Background()
	// 300 KB of script that compresses badly (no server here compresses anyway).
	script := make([]byte, 0, 300<<10)
	script = append(script, "window.deployed=1;\n/*"...)
	for i := 0; len(script) < 300<<10-3; i++ {
		script = append(script, "abcdefghijklmnopqrstuvwxyz0123456789"[(i*7919)%36])
	}
	script = append(script, "*/\n"...)
	var deployed atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		head := ""
		if deployed.Load() {
			head = `<script src="/app.js"></script>`
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<meta name="viewport" content="width=device-width, initial-scale=1">` + head + `</head>
<body><h1>Shop</h1><p>` + strings.Repeat("Words about our products. ", 20) + `</p></body></html>`))
	})
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(script)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	pages := []model.Page{{URL: "/", Alias: "Shop"}}
	site, _ := awstest.Website(t, e.store, model.Website{Account: "acme", Domain: u.Host}, pages)
	page := pages[0]

	// Two real audits (each today's: the second replaces the first, so the first's report and
	// diagnostics are kept under the last good day's keys before it).
	worker := auditworker.NewWorker(auditworker.WorkerConfig{Runs: 1, Scheme: "http", Browser: e.browser}, e.store, e.objects, e.runner, warnLog(t))
	auditNow := func() model.LabResult {
		t.Helper()
		started := time.Now().UTC()
		if err := worker.Audit(ctx, audit.Job{Account: site.Account, Website: site.ID, Page: page.ID, Device: "desktop", Queued: started}, 1); err != nil {
			t.Fatal(err)
		}
		res, err := e.store.LabResults(ctx, site, page.ID, "desktop", model.Day(started), model.Day(time.Now()))
		if err != nil || len(res) == 0 || res[len(res)-1].ReportKey == "" {
			t.Fatalf("the audit's result: %+v, %v", res, err)
		}
		return res[len(res)-1]
	}
	keep := func(r model.LabResult, day string) string {
		t.Helper()
		key := artifact.PageReportKey(site.Account, site.ID, page.ID, day, "desktop")
		if err := artifact.New(e.objects).Copy(ctx, r.ReportKey, key); err != nil {
			t.Fatal(err)
		}
		if _, err := artifact.New(e.objects).Diagnostics(ctx, key); err != nil {
			t.Fatalf("the copy's diagnostics: %v", err)
		}
		return key
	}
	beforeKey := keep(auditNow(), "20261114")
	deployed.Store(true)
	after := auditNow()
	afterKey := keep(after, "20261115")

	// The series: two weeks at the old level, three days at the new (LCP values of each day's
	// runs set around them, as the detector needs days), the real audits' reports and
	// diagnostics on the last good and first bad days.
	start := time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)
	for i := range 17 {
		day := model.Day(start.AddDate(0, 0, i))
		level := 900.0
		if i >= 14 {
			level = 1500
		}
		samples := []float64{level * 0.99, level, level * 1.01}
		res := model.LabResult{Device: "desktop", Day: day, Audited: start.AddDate(0, 0, i), Runs: 3,
			Metrics: map[string]float64{"lcp": level}, Samples: map[string][]float64{"lcp": samples}}
		switch day {
		case "20261114":
			res.ReportKey = beforeKey
		case "20261115":
			res.ReportKey, res.Opportunities = afterKey, after.Opportunities
		}
		if err := e.store.PutLabResult(ctx, site, page, res); err != nil {
			t.Fatal(err)
		}
	}
	watcher := regression.NewWatcher(e.store, artifact.New(e.objects), nil, awstest.Log(t))
	watcher.SetClock(func() time.Time { return start.AddDate(0, 0, 16) })
	if err := watcher.Lab(ctx, site, page, "desktop"); err != nil {
		t.Fatal(err)
	}

	// Through the API, as the dashboard reads them.
	apitest.Provision(t, e.store, apitest.Viewer)
	viewer := apitest.Client{Handler: api.New(api.Deps{Store: e.store, Reports: e.objects, Log: awstest.Log(t)}).Handler(), Key: apitest.ViewerKey}
	var regs struct {
		Result struct {
			List []struct {
				ID, Metric, LastGoodDay, FirstBadDay string
				Cause                                struct {
					Changes []struct{ Kind, Title, URL string }
				}
				Comparison *struct{ Base, Target, Path string }
			}
		}
	}
	viewer.Call(t, "GET", "/"+site.ID+"/regressions?metric=lcp", "", 200, &regs)
	if len(regs.Result.List) != 1 {
		t.Fatalf("regressions %+v, want one of lcp", regs.Result.List)
	}
	reg := regs.Result.List[0]
	for i, c := range reg.Cause.Changes {
		t.Logf("cause %d: %s %s %s", i+1, c.Kind, c.Title, c.URL)
	}
	if reg.Comparison == nil || reg.Comparison.Base != "2026-11-14" || reg.Comparison.Target != "2026-11-15" {
		t.Fatalf("regression %+v: want it linked to the comparison of 2026-11-14 and 2026-11-15", reg)
	}
	if len(reg.Cause.Changes) == 0 || !strings.HasSuffix(reg.Cause.Changes[0].URL, "/app.js") ||
		!strings.Contains(reg.Cause.Changes[0].Title, "+300 KiB") || !strings.Contains(reg.Cause.Changes[0].Title, "script from 127.0.0.1") {
		t.Errorf("the cause does not name the script first: %+v", reg.Cause.Changes)
	}

	var cmp struct {
		Metrics []struct {
			Name   string
			Change *float64
		}
		Loads *struct {
			Requests []struct {
				Kind, URL, ResourceType string
				SizeChange              int64
			}
			Filmstrip struct {
				Slots []struct{ Base, Target *struct{ URL string } }
			}
		}
	}
	viewer.Call(t, "GET", reg.Comparison.Path, "", 200, &cmp)
	if cmp.Loads == nil {
		t.Fatal("the comparison has no loads: the audits kept no diagnostics")
	}
	var added []string
	for _, r := range cmp.Loads.Requests {
		if r.Kind == "added" {
			added = append(added, r.URL)
			if strings.HasSuffix(r.URL, "/app.js") && (r.ResourceType != "Script" || r.SizeChange < 300<<10) {
				t.Errorf("the script added: %+v", r)
			}
		}
	}
	if len(added) != 1 || !strings.HasSuffix(added[0], "/app.js") {
		t.Errorf("requests added %v, want the script alone", added)
	}
	frames := 0
	for _, s := range cmp.Loads.Filmstrip.Slots {
		if s.Base != nil && s.Target != nil {
			frames++
		}
	}
	if frames == 0 {
		t.Error("the filmstrips have no time where both loads show a frame")
	}
	if len(cmp.Metrics) != 1 || cmp.Metrics[0].Name != "lcp" || *cmp.Metrics[0].Change != 600 {
		t.Errorf("metrics %+v: want lcp +600 ms", cmp.Metrics)
	}
}
