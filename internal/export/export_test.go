package export_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// seeded is a website with a day of data in every dataset.
type seeded struct {
	store   *store.Store
	objects *blobstore.Bucket
	reports *blobstore.Bucket
	field   *rum.SegmentReader
	site    model.Website
	pages   []model.Page
	day     string
	lab     []model.LabResult
}

func seed(t *testing.T) seeded {
	t.Helper()
	ctx := context.Background()
	clients := awstest.Clients(t)
	s := seeded{store: awstest.Store(t, clients), objects: awstest.Bucket(t), reports: awstest.Bucket(t), day: "20261120"}
	s.field = rum.NewSegmentReader(awstest.RUM(t, s.store), s.store)
	s.site = model.Website{Account: "acme", Domain: "example.com", DisplayName: "Example"}
	if err := s.store.CreateWebsite(ctx, &s.site); err != nil {
		t.Fatal(err)
	}
	s.pages = []model.Page{{URL: "/"}, {URL: "/pricing"}}
	for i := range s.pages {
		s.pages[i].ID = model.NewID()
	}
	if err := s.store.CreatePages(ctx, s.site, s.pages); err != nil {
		t.Fatal(err)
	}
	audited := time.Date(2026, 11, 20, 3, 4, 5, 0, time.UTC)
	for i, p := range s.pages {
		for _, d := range export.Devices {
			r := model.LabResult{Page: p.ID, Device: d, Day: s.day, Runs: 3, LighthouseVersion: "13.5.0", Audited: audited,
				Metrics:       map[string]float64{"lcp": 1200 + float64(i*100), "cls": 0.05, "tbt": 80},
				Samples:       map[string][]float64{"lcp": {1100, 1200 + float64(i*100), 1500}},
				Opportunities: []model.Opportunity{{ID: "render-blocking-resources", Title: "Eliminate", Category: "performance"}},
				ReportKey:     "acme/" + s.site.ID + "/pages/" + p.ID + "/" + d + ".json.gz"}
			if err := s.store.PutLabResult(ctx, s.site, p, r); err != nil {
				t.Fatal(err)
			}
			s.lab = append(s.lab, r)
			// The day before and after are not the day's.
			for _, other := range []string{"20261119", "20261121"} {
				r.Day = other
				if err := s.store.PutLabResult(ctx, s.site, p, r); err != nil {
					t.Fatal(err)
				}
			}
		}
		ux := model.UXResult{Page: p.ID, Device: "mobile", Day: s.day, Collected: audited,
			Vitals: map[string]model.Vital{"lcp": {P75: 2400, Good: 70, NeedsImprovement: 20, Poor: 10}, "cls": {P75: 0.1, Good: 80, NeedsImprovement: 15, Poor: 5}}}
		if err := s.store.PutUXResult(ctx, s.site, p, ux); err != nil {
			t.Fatal(err)
		}
	}
	from, err := s.store.WatchedState(ctx, s.site, store.PageState(s.pages[0].ID, "audit#mobile"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.ChangeState(ctx, s.site, from, "failing", s.day, &model.Event{Type: "audit.failed", Page: s.pages[0].ID,
		Device: "mobile", Occurred: audited.Add(time.Hour), Summary: "the audit failed"}); err != nil {
		t.Fatal(err)
	}
	reg := model.Regression{ID: model.RegressionID(s.site, "lcp", s.day), Kind: model.KindRegression, Source: "lab", Page: s.pages[1].ID, Device: "desktop", Metric: "lcp",
		LastGood: "20261119", FirstBad: s.day, Before: model.Level{Median: 1200}, After: model.Level{Median: 1800}, Delta: 600, Percent: 50,
		P: 0.001, Status: "open", Detected: audited, Incident: "inc1", Cause: []model.CauseItem{{Kind: "resource_added", Title: "hero.jpg"}}}
	if _, err := s.store.PutRegression(ctx, s.site, reg); err != nil {
		t.Fatal(err)
	}
	// The diagnostics of "/" on mobile that day; the other audits kept none.
	lcp, fcp, load, delay, dur := 1300.0, 700.0, 2100.0, 150.0, 400.0
	d := model.Diagnostics{URL: "https://example.com/", Marks: model.Marks{FCP: &fcp, LCP: &lcp, Load: &load},
		Requests: []model.Request{
			{URL: "https://example.com/", Type: "Document", TransferSize: 10_000, Status: 200, Document: true},
			{URL: "https://example.com/app.css", Type: "Stylesheet", TransferSize: 4_000, Status: 200, RenderBlocking: true},
			{URL: "https://example.com/hero.jpg", Type: "Image", TransferSize: 80_000, Status: 200, LCP: true},
			{URL: "https://cdn.ads.example/tag.js", Type: "Script", TransferSize: 30_000, Status: 200, ThirdParty: true, RenderBlocking: true},
			{URL: "https://cdn.ads.example/px.gif", Type: "Image", TransferSize: 0, Status: -1, ThirdParty: true},
		},
		LCP: &model.LCP{Time: lcp, Selector: "main > img", ImageURL: "https://example.com/hero.jpg",
			Phases: model.LCPPhases{TTFB: 250, LoadDelay: &delay, LoadDuration: &dur, RenderDelay: 500}},
		Shifts:       []model.LayoutShift{{Time: 900, Score: 0.04}, {Time: 1400, Score: 0.01}},
		LongTasks:    []model.LongTask{{URL: "https://cdn.ads.example/tag.js", Start: 800, Duration: 120}, {Start: 1500, Duration: 60}},
		MainThread:   []model.WorkCategory{{Category: "scriptEvaluation", Duration: 400}, {Category: "styleLayout", Duration: 90}},
		ThirdParties: []model.ThirdParty{{Entity: "Ads", Requests: 2, TransferSize: 30_000, MainThreadTime: 180}},
		Document:     model.DocumentTiming{DNS: 20, Connect: 40, TLS: 25, Wait: 180, Download: 10},
	}
	body, _ := json.Marshal(d)
	mobile := s.lab[1]
	if err := s.reports.Put(ctx, artifact.DiagnosticsKey(mobile.ReportKey), awstest.Gzipped(t, body), "application/gzip"); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWebsiteDay writes a day's export into the S3 stand-in and reads every file back with the
// same library: the rows are the day's, with the values stored.
func TestWebsiteDay(t *testing.T) {
	ctx := context.Background()
	s := seed(t)
	res, err := export.New(s.store, s.reports, s.field, s.objects).Website(ctx, s.site, s.day)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{export.LabRuns: 4, export.UX: 4, export.Events: 1, export.Incidents: 1, export.Diagnostics: 1, export.RUMDaily: 0}
	if !reflect.DeepEqual(res.Rows, want) {
		t.Fatalf("rows %v, want %v", res.Rows, want)
	}

	lab := readBack[export.LabRun](t, s, export.LabRuns)
	if len(lab) != 4 {
		t.Fatalf("%d lab rows, want 4", len(lab))
	}
	first := lab[0] // "/" on desktop: the rows are in URL and device order
	if first.URL != "/" || first.Device != "desktop" || first.Website != s.site.ID || first.Page != s.pages[0].ID {
		t.Fatalf("first lab row %+v", first)
	}
	stored := s.lab[0]
	if !reflect.DeepEqual(first.Metrics, stored.Metrics) || !reflect.DeepEqual(first.Samples, stored.Samples) ||
		!first.Audited.Equal(stored.Audited) || first.Runs != 3 || first.ReportKey != stored.ReportKey ||
		first.Method != model.MethodSimulated || // stored without a method: measured before methods existed

		!reflect.DeepEqual(first.Opportunities, []string{"render-blocking-resources"}) {
		t.Fatalf("lab row %+v, stored %+v", first, stored)
	}

	ux := readBack[export.UXRecord](t, s, export.UX)
	if len(ux) != 4 || ux[0].Vital != "cls" || ux[0].P75 != 0.1 || ux[1].Vital != "lcp" || ux[1].P75 != 2400 || ux[1].Poor != 10 {
		t.Fatalf("ux rows %+v", ux)
	}
	ev := readBack[export.EventRow](t, s, export.Events)
	if len(ev) != 1 || ev[0].Type != "audit.failed" || ev[0].Page != s.pages[0].ID || ev[0].After != "failing" {
		t.Fatalf("event rows %+v", ev)
	}
	inc := readBack[export.IncidentRow](t, s, export.Incidents)
	if len(inc) != 1 || inc[0].ID != model.RegressionID(s.site, "lcp", s.day) || inc[0].AfterMedian != 1800 || inc[0].Incident != "inc1" ||
		!reflect.DeepEqual(inc[0].Causes, []string{"resource_added: hero.jpg"}) {
		t.Fatalf("incident rows %+v", inc)
	}

	diag := readBack[export.DiagnosticsRow](t, s, export.Diagnostics)
	if len(diag) != 1 {
		t.Fatalf("%d diagnostics rows, want 1 (the audits without diagnostics have none)", len(diag))
	}
	dr := diag[0]
	if dr.Page != s.pages[0].ID || dr.Device != "mobile" || dr.URL != "/" || *dr.LCP != 1300 || *dr.FCP != 700 || *dr.Load != 2100 ||
		dr.SpeedIndex != nil || dr.LCPSelector != "main > img" || *dr.LCPTTFB != 250 || *dr.LCPLoadDelay != 150 ||
		*dr.LCPLoadDuration != 400 || *dr.LCPRenderDelay != 500 || dr.RenderBlockingRequests != 2 || dr.RenderBlockingBytes != 34_000 ||
		dr.LongTasks != 2 || dr.LongTasksTotal != 180 || dr.LongestTask != 120 || dr.LayoutShifts != 2 || dr.LargestShift != 0.04 ||
		dr.Requests != 5 || dr.Bytes != 124_000 || dr.FailedRequests != 1 || dr.ThirdPartyRequests != 2 || dr.ThirdPartyBytes != 30_000 ||
		dr.ThirdPartyMainThread != 180 || dr.DocumentWait != 180 || dr.DocumentTLS != 25 ||
		!reflect.DeepEqual(dr.RequestsByType, map[string]int32{"Document": 1, "Stylesheet": 1, "Image": 2, "Script": 1}) ||
		!reflect.DeepEqual(dr.BytesByType, map[string]int64{"Document": 10_000, "Stylesheet": 4_000, "Image": 80_000, "Script": 30_000}) ||
		!reflect.DeepEqual(dr.MainThreadByWork, map[string]float64{"scriptEvaluation": 400, "styleLayout": 90}) {
		t.Fatalf("diagnostics row %+v", dr)
	}
	if rows := readBack[export.RUMDailyRow](t, s, export.RUMDaily); len(rows) != 0 {
		t.Fatalf("real users' rows without real users: %+v", rows)
	}

	// A day without data writes empty files, which replace what was exported of it before.
	if res, err := export.New(s.store, s.reports, s.field, s.objects).Website(ctx, s.site, "20261001"); err != nil || res.Rows[export.LabRuns] != 0 {
		t.Fatalf("empty day: %+v, %v", res, err)
	}
}

func readBack[T any](t *testing.T, s seeded, dataset string) []T {
	t.Helper()
	body, err := s.objects.Get(context.Background(), export.Key(dataset, s.site.ID, s.day))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := export.Read[T](body)
	if err != nil {
		t.Fatalf("read %s: %v", dataset, err)
	}
	return rows
}

func TestKey(t *testing.T) {
	if got := export.Key(export.LabRuns, "w1", "20261120"); got != "exports/lab_runs/day=2026-11-20/website=w1/part.parquet" {
		t.Fatal(got)
	}
}
