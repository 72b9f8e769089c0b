package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// TestHistoryItemsEnd: every item of a website's kept history holds its end (model.HistoryEnd
// of its day) in the attribute the table's TTL reads: results, runs, test series and their
// tests, a regression over; an open regression and the website's settings have none.
func TestHistoryItemsEnd(t *testing.T) {
	ctx := context.Background()
	clients, st, w := newWebsite(t)
	pages := addPages(t, st, w, []model.Page{{URL: "/"}})
	p := pages[0]
	const day = "20261102"
	created := time.Date(2026, 11, 2, 3, 4, 5, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(st.PutLabResult(ctx, w, p, model.LabResult{Device: "mobile", Day: day, Metrics: map[string]float64{"lcp": 1000}}))
	must(st.PutUXResult(ctx, w, p, model.UXResult{Device: "mobile", Day: day}))
	must(st.PutSearchResults(ctx, w, pages, []model.SearchResult{{Page: p.ID, Day: day}}))
	test := model.Test{Alias: "Checkout", Device: "desktop"}
	must(st.CreateTest(ctx, w, &test))
	run, err := st.CreateRun(ctx, w, test)
	must(err)
	run.Status = model.RunCompleted
	must(st.UpdateRun(ctx, w, run))
	must(st.CreateTestSeries(ctx, w, model.TestSeries{ID: model.NewSeriesID(created), Created: created},
		[]model.SeriesTest{{ID: model.SeriesTestID(model.NewSeriesID(created), 0), Page: p.ID, Device: "mobile", Status: model.RunQueued}}))
	improvement := model.Regression{ID: "rg_" + day + "_a", Kind: model.KindImprovement, Source: "lab", Page: p.ID, Metric: "lcp", FirstBad: day, Status: model.RegressionOpen}
	open := model.Regression{ID: "rg_" + day + "_b", Kind: model.KindRegression, Source: "lab", Page: p.ID, Metric: "tbt", FirstBad: day, Status: model.RegressionOpen}
	for _, r := range []model.Regression{improvement, open} {
		_, err := st.PutRegression(ctx, w, r)
		must(err)
	}

	ofDay := model.HistoryEnd(day).Unix()
	want := map[string]int64{ // by the start of the item's sort key after its page's or test's prefix
		"LAB#": ofDay, "UX#": ofDay, "SEARCH#": ofDay, "RUN#": model.HistoryEnd(model.Day(run.Created)).Unix(),
		"TS#": ofDay, "TT#": ofDay, "RG#" + improvement.ID: ofDay, "RG#" + open.ID: 0,
	}
	found := map[string]int{}
	for _, item := range itemsOf(t, clients, st, w) {
		rest := strings.TrimPrefix(strings.TrimPrefix(item.sk, "P#"+p.ID+"#"), "T#"+test.ID+"#")
		for prefix, end := range want {
			if strings.HasPrefix(rest, prefix) {
				found[prefix]++
				if item.expires != end {
					t.Errorf("%s expires at %d, want %d", item.sk, item.expires, end)
				}
			}
		}
		if strings.HasPrefix(item.sk, "BUDGET#") || strings.HasPrefix(item.sk, "ROW#") || strings.HasSuffix(item.sk, "#URL") {
			if item.expires != 0 {
				t.Errorf("%s expires at %d", item.sk, item.expires)
			}
		}
	}
	for prefix := range want {
		if found[prefix] == 0 {
			t.Errorf("no item %s…", prefix)
		}
	}
	if end := model.HistoryEnd(day); !end.Equal(time.Date(2028, 11, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("the history of %s ends %v, want %d days later", day, end, model.HistoryDays)
	}
}
