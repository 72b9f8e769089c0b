package metrics_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestReader reads a website of two pages from DynamoDB Local: home has lab results on both
// devices (one of them older than the window), user-experience records on mobile and search
// analytics; pricing has nothing.
func TestReader(t *testing.T) {
	ctx := context.Background()
	st := awstest.Store(t, awstest.Clients(t))
	now := time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC)
	day := func(back int) string { return model.Day(now.AddDate(0, 0, -back)) }
	pages := []model.Page{{URL: "/", Alias: "Home"}, {URL: "/pricing", Alias: "Pricing"}}
	site, _ := awstest.Website(t, st, model.Website{Account: "acme", Domain: "example.com", DisplayName: "example.com"}, pages)
	home := pages[0]
	for _, r := range []model.LabResult{
		{Page: home.ID, Device: "desktop", Day: day(metrics.WindowDays), Metrics: map[string]float64{"lcp": 9000}},
		{Page: home.ID, Device: "desktop", Day: day(metrics.WindowDays - 1), Metrics: map[string]float64{"lcp": 1000},
			Opportunities: []model.Opportunity{{ID: "images", Title: "Images", Category: "performance"}}},
		{Page: home.ID, Device: "mobile", Day: day(0), Metrics: map[string]float64{"lcp": 3000}},
	} {
		if err := st.PutLabResult(ctx, site, home, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.PutUXResult(ctx, site, home, model.UXResult{Device: "mobile", Day: day(1),
		Vitals: map[string]model.Vital{"lcp": {P75: 2000}, "cls": {P75: 0.05}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutSearchResults(ctx, site, []model.Page{home}, []model.SearchResult{{Page: home.ID, Day: day(2), Impressions: 10, Clicks: 1}}); err != nil {
		t.Fatal(err)
	}
	r := metrics.NewReader(st, func() time.Time { return now })

	count := func(series []metrics.Series) (lab, ux, search int) {
		for _, s := range series {
			lab, ux, search = lab+len(s.Lab), ux+len(s.UX), search+len(s.Search)
		}
		return lab, ux, search
	}
	for _, tc := range []struct {
		inc                  metrics.Include
		lab, ux, search      int
		homeDesktopHasSearch bool
	}{
		{metrics.Include{}, 2, 0, 0, false},
		{metrics.Include{UX: true}, 2, 1, 0, false},
		// Search analytics are per page: both of home's devices have them.
		{metrics.Include{UX: true, Search: true}, 2, 1, 2, true},
	} {
		series, err := r.Website(ctx, site, tc.inc)
		if err != nil {
			t.Fatal(err)
		}
		if len(series) != 4 || series[0].Page.ID != home.ID || series[0].Device != "desktop" || series[1].Device != "mobile" {
			t.Fatalf("series %+v: one per page and device, in page order", series)
		}
		lab, ux, search := count(series)
		if lab != tc.lab || ux != tc.ux || search != tc.search || (len(series[0].Search) > 0) != tc.homeDesktopHasSearch {
			t.Errorf("%+v read %d lab results, %d ux records, %d search results; want %d, %d, %d (the window is %d days)",
				tc.inc, lab, ux, search, tc.lab, tc.ux, tc.search, metrics.WindowDays)
		}
	}

	// The page list shows search analytics only for a website with the integration.
	if search, err := r.HasSearch(ctx, site); err != nil || search {
		t.Errorf("without the integration: search %v, %v", search, err)
	}
	if err := st.PutSearchConsole(ctx, site, model.SearchConsole{Property: "sc-domain:example.com", Credentials: []byte{1}}); err != nil {
		t.Fatal(err)
	}
	if search, err := r.HasSearch(ctx, site); err != nil || !search {
		t.Errorf("with the integration: search %v, %v", search, err)
	}

	d, err := r.Detail(ctx, site, home, "mobile")
	if err != nil || len(d.Lab) != 1 || len(d.UX) != 1 || len(d.Search) != 0 || d.LastError != nil {
		t.Errorf("detail %+v, %v", d, err)
	}
	if err := st.PutLabError(ctx, site, home, "desktop", model.LabError{Message: "net::ERR_NAME_NOT_RESOLVED", Attempts: 3}); err != nil {
		t.Fatal(err)
	}
	if d, err = r.Detail(ctx, site, home, "desktop"); err != nil || d.LastError == nil || d.LastError.Attempts != 3 {
		t.Errorf("detail with a failure %+v, %v", d, err)
	}

	latest, ok, err := r.LatestResult(ctx, site, home.ID, "desktop")
	if err != nil || !ok || latest.Metrics["lcp"] != 1000 {
		t.Errorf("latest result %+v %v %v", latest, ok, err)
	}
	if _, ok, err := r.LatestResult(ctx, site, pages[1].ID, "desktop"); ok || err != nil {
		t.Errorf("latest result of a page without any: %v, %v", ok, err)
	}

	opps, err := r.Opportunities(ctx, site)
	if err != nil || len(opps) != 1 || opps[0].ID != "images" || opps[0].Title != "Images" || len(opps[0].Pages) != 1 ||
		opps[0].FirstSeen.Format(model.DayLayout) != day(metrics.WindowDays-1) {
		t.Errorf("opportunities %+v, %v", opps, err)
	}
}
