package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// TestExportOnDemand: an admin writes a day's export; the Parquet file read back with the
// library holds the values the API answers for that day (the timeline's), and a viewer, a bad
// day or another account's website writes nothing.
func TestExportOnDemand(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t)
	w := e.createWebsite("example.com")
	pages := e.createPages(w.ID, "/", "/pricing")
	site := e.storedWebsite(w.ID)
	yesterday := time.Now().UTC().AddDate(0, 0, -1)
	day := yesterday.Format(model.DayLayout)
	stored, err := e.store.Pages(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	for i, mp := range stored {
		p := mp
		r := model.LabResult{Page: p.ID, Device: "mobile", Day: day, Runs: 3, Audited: yesterday,
			Metrics: map[string]float64{"lcp": 1800 + float64(i), "cls": 0.12, "fcp": 900, "dom_elements": 640}}
		if err := e.store.PutLabResult(ctx, site, mp, r); err != nil {
			t.Fatal(err)
		}
	}

	e.do("POST", "/"+w.ID+"/exports", apitest.ViewerKey, map[string]string{}).Want(t, 403)
	e.do("POST", "/"+w.ID+"/exports", apitest.OtherKey, map[string]string{}).Want(t, 404)
	e.do("POST", "/"+w.ID+"/exports", apitest.AdminKey, map[string]string{"day": "2026-02-30"}).Want(t, 422)
	e.do("POST", "/"+w.ID+"/exports", apitest.AdminKey, map[string]string{"day": time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)}).Want(t, 422)
	if keys, err := e.exports.Keys(ctx, ""); err != nil || len(keys) != 0 {
		t.Fatalf("refused exports wrote %v (%v)", keys, err)
	}

	var res struct {
		Day  string
		Rows map[string]int
		Keys []string
	}
	e.do("POST", "/"+w.ID+"/exports", apitest.AdminKey, map[string]string{}).Want(t, 200).Decode(t, &res)
	if res.Day != yesterday.Format(time.DateOnly) || res.Rows[export.LabRuns] != 2 || len(res.Keys) != len(export.Datasets) {
		t.Fatalf("export answered %+v", res)
	}
	body, err := e.exports.Get(ctx, export.Key(export.LabRuns, w.ID, day))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := export.Read[export.LabRun](body)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		var timeline struct {
			Result []map[string]any `json:"result"`
		}
		e.do("GET", "/"+w.ID+"/pages/"+p.ID+"/timeline?device=mobile&date="+day+"-"+day, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &timeline)
		if len(timeline.Result) != 1 {
			t.Fatalf("timeline of %s: %+v", p.URL, timeline)
		}
		api := timeline.Result[0]
		var row *export.LabRun
		for i := range rows {
			if rows[i].Page == p.ID && rows[i].Device == "mobile" {
				row = &rows[i]
			}
		}
		if row == nil || row.URL != p.URL || row.Website != w.ID {
			t.Fatalf("no lab row of %s in %+v", p.URL, rows)
		}
		for _, m := range []string{"lcp", "cls", "fcp", "dom_elements"} {
			if v, ok := api[m].(float64); !ok || v != row.Metrics[m] {
				t.Errorf("%s %s: exported %v, the API answers %v", p.URL, m, row.Metrics[m], api[m])
			}
		}
	}
}

// TestDataSettings: the defaults are the deployment's, a value out of bounds is a 422 naming
// the field that changes nothing, a viewer may read but not change them.
func TestDataSettings(t *testing.T) {
	e := newTestEnv(t)
	w := e.createWebsite("example.com")
	var got struct {
		Exports   bool
		Retention model.Retention
		Effective model.Retention
		Limits    map[string]struct{ Min, Default, Max int }
	}
	e.do("GET", "/"+w.ID+"/data-settings", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &got)
	if got.Exports || got.Effective != (model.Retention{Reports: 90, Series: 90, RUM: 400, Events: 90, Exports: 731}) || got.Limits["reports"].Min != 31 {
		t.Fatalf("defaults %+v", got)
	}
	e.do("PUT", "/"+w.ID+"/data-settings", apitest.ViewerKey, map[string]any{"exports": true}).Want(t, 403)
	e.do("PUT", "/"+w.ID+"/data-settings", apitest.AdminKey, map[string]any{"exports": true, "retention": map[string]int{"reports": 30, "exports": 800}}).
		Want(t, 422).Problem(t, "retention.reports", "retention.exports")
	e.do("GET", "/"+w.ID+"/data-settings", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &got)
	if got.Exports || got.Retention != (model.Retention{}) {
		t.Fatalf("a refused change changed %+v", got)
	}
	e.do("PUT", "/"+w.ID+"/data-settings", apitest.AdminKey, map[string]any{"exports": true, "retention": map[string]int{"reports": 31, "events": 7}}).Want(t, 200).Decode(t, &got)
	if !got.Exports || got.Effective.Reports != 31 || got.Effective.Events != 7 || got.Effective.Exports != 731 {
		t.Fatalf("after the change %+v", got)
	}
}

// TestExportDiagnosticsAndRealUsers: a day's export holds each audit's diagnostics as numbers
// equal to those of GET .../diagnostics, and real users' daily aggregates (the website per
// group, device, country and navigation; a monitored page per device and navigation, and per
// device and country) equal to what the segment reports answer for the same segments.
func TestExportDiagnosticsAndRealUsers(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t)
	w := e.createWebsite("example.com")
	base := "/" + w.ID
	e.do("PUT", base+"/field-testing/settings", apitest.AdminKey, map[string]any{"groups": []any{map[string]any{"name": "Products", "pattern": "/product/*"}}}).Want(t, 200)
	pages := e.createPages(w.ID, "/", "/product/1")
	site := e.storedWebsite(w.ID)
	now := time.Now().UTC()
	day := now.Format(model.DayLayout)
	stored, err := e.store.Pages(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range stored {
		r := model.LabResult{Page: p.ID, Device: "mobile", Day: day, Runs: 3, Audited: now, Metrics: map[string]float64{"lcp": 1800},
			ReportKey: "acme/" + w.ID + "/pages/" + p.ID + "/lighthouse/" + day + "-mobile.json.gz"}
		if err := e.store.PutLabResult(ctx, site, p, r); err != nil {
			t.Fatal(err)
		}
		if p.URL != "/product/1" {
			continue // an audit without diagnostics has no row
		}
		lcp, fcp, delay, dur := 2300.0, 900.0, 300.0, 700.0
		d := model.Diagnostics{URL: "https://example.com/product/1", Marks: model.Marks{FCP: &fcp, LCP: &lcp},
			Requests: []model.Request{
				{URL: "https://example.com/product/1", Type: "Document", TransferSize: 20_000, Status: 200, Document: true},
				{URL: "https://example.com/a.css", Type: "Stylesheet", TransferSize: 6_000, Status: 200, RenderBlocking: true},
				{URL: "https://example.com/p.jpg", Type: "Image", TransferSize: 120_000, Status: 200, LCP: true},
				{URL: "https://tags.example.net/t.js", Type: "Script", TransferSize: 40_000, Status: 200, ThirdParty: true},
			},
			LCP: &model.LCP{Time: lcp, Selector: "img.product", ImageURL: "https://example.com/p.jpg",
				Phases: model.LCPPhases{TTFB: 400, LoadDelay: &delay, LoadDuration: &dur, RenderDelay: 900}},
			LongTasks:  []model.LongTask{{Start: 1000, Duration: 210}, {Start: 1600, Duration: 75}, {Start: 2500, Duration: 52}},
			Shifts:     []model.LayoutShift{{Time: 1200, Score: 0.08}},
			MainThread: []model.WorkCategory{{Category: "scriptEvaluation", Duration: 640}},
			Document:   model.DocumentTiming{Wait: 320, Download: 15},
		}
		body, _ := json.Marshal(d)
		e.putGzipped(artifact.DiagnosticsKey(r.ReportKey), body)
	}

	send := func(url, ua, nav, metrics, addr string) {
		body := fmt.Sprintf(`{"w":%q,"u":%q,"m":%s,"s":{"n":%q,"e":"4g"}}`, w.ID, url, metrics, nav)
		e.beacon(body, "text/plain", addr, map[string]string{"User-Agent": ua}).Want(t, 202)
	}
	views := 0
	for i := range 4 {
		for _, v := range []struct{ url, ua, nav, addr string }{
			{"https://example.com/product/1", uaPhone, "navigate", "8.8.8.8:1"},
			{"https://example.com/product/1", uaPhone, "reload", "127.0.0.1:1"},
			{"https://example.com/product/2", uaDesktop, "navigate", "8.8.8.8:1"},
			{"https://example.com/", uaDesktop, "back-forward", "8.8.8.8:1"},
			{"https://example.com/", uaPhone, "navigate", "127.0.0.1:1"},
		} {
			send(v.url, v.ua, v.nav, fmt.Sprintf(`{"lcp":%d,"inp":%d,"cls":0.0%d}`, 1000+400*i+100*views%7, 80+40*i, i), v.addr)
			views++
		}
	}
	e.fold(views)

	var res struct{ Rows map[string]int }
	e.do("POST", base+"/exports", apitest.AdminKey, map[string]string{"day": now.Format(time.DateOnly)}).Want(t, 200).Decode(t, &res)
	if res.Rows[export.Diagnostics] != 1 || res.Rows[export.RUMDaily] == 0 {
		t.Fatalf("export answered %+v", res)
	}

	body, err := e.exports.Get(ctx, export.Key(export.Diagnostics, w.ID, day))
	if err != nil {
		t.Fatal(err)
	}
	diags, err := export.Read[export.DiagnosticsRow](body)
	if err != nil || len(diags) != 1 {
		t.Fatalf("diagnostics rows %+v (%v)", diags, err)
	}
	var api struct{ Diagnostics model.Diagnostics }
	e.do("GET", base+"/pages/"+pages[1].ID+"/diagnostics?device=mobile", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &api)
	ad, row := api.Diagnostics, diags[0]
	var longTotal, blockingBytes, imageBytes float64
	for _, lt := range ad.LongTasks {
		longTotal += lt.Duration
	}
	for _, r := range ad.Requests {
		if r.RenderBlocking {
			blockingBytes += float64(r.TransferSize)
		}
		if r.Type == "Image" {
			imageBytes += float64(r.TransferSize)
		}
	}
	if row.Page != pages[1].ID || *row.LCP != ad.LCP.Time || row.LCPSelector != ad.LCP.Selector || *row.LCPTTFB != ad.LCP.Phases.TTFB ||
		*row.LCPLoadDelay != *ad.LCP.Phases.LoadDelay || *row.LCPLoadDuration != *ad.LCP.Phases.LoadDuration ||
		*row.LCPRenderDelay != ad.LCP.Phases.RenderDelay || *row.FCP != *ad.Marks.FCP || row.Load != nil ||
		int(row.LongTasks) != len(ad.LongTasks) || row.LongTasksTotal != longTotal || int(row.Requests) != len(ad.Requests) ||
		float64(row.RenderBlockingBytes) != blockingBytes || float64(row.BytesByType["Image"]) != imageBytes ||
		row.ThirdPartyBytes != 40_000 || row.DocumentWait != ad.Document.Wait || row.LargestShift != ad.Shifts[0].Score {
		t.Errorf("diagnostics row %+v, the API answers %+v", row, ad)
	}

	body, err = e.exports.Get(ctx, export.Key(export.RUMDaily, w.ID, day))
	if err != nil {
		t.Fatal(err)
	}
	field, err := export.Read[export.RUMDailyRow](body)
	if err != nil {
		t.Fatal(err)
	}
	date := "&date=" + day + "-" + day
	type listed struct {
		Key   string
		Views uint64
		Value float64
	}
	segments := func(query string) map[string]listed {
		var seg struct{ Result struct{ List []listed } }
		e.do("GET", base+"/field-testing/segments?"+query+date, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &seg)
		out := map[string]listed{}
		for _, l := range seg.Result.List {
			out[l.Key] = l
		}
		return out
	}
	var siteViews, pageViews uint64
	kinds := map[string]bool{}
	for _, r := range field {
		var q, key string
		switch {
		case r.Page == "":
			q, key = fmt.Sprintf("metric=%s&by=country&group=%s&device=%s&navigation=%s", r.Metric, r.Group, r.Device, r.Navigation), r.Country
			if r.Metric == "lcp" {
				siteViews += uint64(r.Views)
			}
			kinds["site"] = true
		case r.Country == "":
			q, key = fmt.Sprintf("metric=%s&page=%s&by=navigation&device=%s", r.Metric, r.Page, r.Device), r.Navigation
			if r.Metric == "lcp" {
				pageViews += uint64(r.Views)
			}
			kinds["page by navigation"] = true
		default:
			q, key = fmt.Sprintf("metric=%s&page=%s&by=country&device=%s", r.Metric, r.Page, r.Device), r.Country
			kinds["page by country"] = true
		}
		if r.Website != w.ID || (r.Page != "" && r.URL != "/product/1" && r.URL != "/") {
			t.Errorf("row %+v", r)
		}
		got := segments(q)[key]
		if got.Views != uint64(r.Views) || got.Value != r.P75 {
			t.Errorf("%s: exported %d views, p75 %v; the API answers %d views, %v for %s", q, r.Views, r.P75, got.Views, got.Value, key)
		}
	}
	// Every view is in the website's rows; the monitored pages' are those of "/" and /product/1.
	if siteViews != uint64(views) || pageViews != uint64(views)*4/5 || len(kinds) != 3 {
		t.Errorf("%d views in the website's lcp rows, %d in the pages', kinds %v; sent %d", siteViews, pageViews, kinds, views)
	}
}
