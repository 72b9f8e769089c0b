package uxworker_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/ux"
)

// TestHistoryFromDayOne adds a page through the API, which queues the fetch of its history on
// the ux queue; the worker stores the 40 weekly periods of the page and of the origin as the
// History API answers them (a first period without data), the API serves them, the weekly
// series' step is found, and the history is asked for again a week later, not before.
func TestHistoryFromDayOne(t *testing.T) {
	e := newTestEnv(t)
	site, _ := awstest.Website(t, e.Store, model.Website{Account: "acme", Domain: "example.com", DisplayName: "example.com"}, nil)
	lastSat := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	g := e.google
	// LCP p75 of 2000 ms until period 24, then 3000 ms: a rolling window turns over in 4 periods.
	g.history["https://example.com/pricing PHONE"] = []answer{historyRecord("https://example.com/pricing", "PHONE", 40, lastSat, func(i int) float64 {
		return 2000 + 1000*min(max(float64(i-23)/4, 0), 1) + float64(i%3)*10
	})}
	g.history["https://example.com PHONE"] = []answer{historyRecord("https://example.com", "PHONE", 40, lastSat, func(int) float64 { return 1800 })}

	apitest.Provision(t, e.Store, apitest.Admin)
	q := awstest.Queue(t, e.Clients, service.UXQueueSettings)
	h := apitest.Client{Handler: api.New(api.Deps{Store: e.Store, Credentials: e.keys, Log: awstest.Log(t), FieldHistory: ux.NewQueue(q)}).Handler(), Key: apitest.AdminKey}
	h.Call(t, "POST", "/"+site.ID+"/settings/pages", `[{"url": "/pricing", "alias": "Pricing"}]`, http.StatusOK, nil)
	pages, err := e.Store.Pages(e.ctx, site)
	if err != nil || len(pages) != 1 {
		t.Fatalf("pages %v, %v", pages, err)
	}
	page := pages[0]

	c := e.collector(cruxKey)
	watcher := regression.NewWatcher(e.Store, nil, nil, awstest.Log(t))
	watcher.SetClock(e.clock.Now)
	c.SetRegressions(watcher)
	if n := awstest.DrainAll(t, q, 1, 1, c.HandleSQS); n != 1 {
		t.Fatalf("handled %d messages, want the new page's one", n)
	}
	got, err := e.Store.UXHistory(e.ctx, site, page.ID, "mobile")
	if err != nil {
		t.Fatalf("page history not stored on creation: %v", err)
	}
	if len(got.Periods) != 40 || got.Periods[39].Last != "20261121" || got.Periods[39].First != "20261025" {
		t.Fatalf("periods %d, last %+v", len(got.Periods), got.Periods[len(got.Periods)-1])
	}
	if _, ok := got.Periods[0].Vitals["lcp"]; ok {
		t.Errorf("a period without data (null p75, NaN densities) has an LCP: %+v", got.Periods[0])
	}
	if v := got.Periods[39].Vitals["lcp"]; v.P75 != 3000 || v.Good != 79.25 || v.Poor != 8.6 {
		t.Errorf("last period's LCP = %+v", v)
	}
	if d, err := e.Store.UXHistory(e.ctx, site, page.ID, "desktop"); err != nil || !d.NoData {
		t.Errorf("desktop history = %+v, %v; want recorded without data", d, err)
	}
	if o, err := e.Store.UXHistory(e.ctx, site, "", "mobile"); err != nil || len(o.Periods) != 40 {
		t.Errorf("origin history = %d periods, %v", len(o.Periods), err)
	}

	// The weekly series' step: one regression, dated in the periods the window turned over.
	regs, _, err := e.Store.Regressions(e.ctx, site, model.RegressionFilter{Page: page.ID}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var weekly []model.Regression
	for _, r := range regs {
		if r.Source == regression.SourceUXWeekly {
			weekly = append(weekly, r)
		}
	}
	if len(weekly) != 1 || weekly[0].Metric != "lcp" || weekly[0].Kind != model.KindRegression {
		t.Fatalf("weekly regressions %+v; want one LCP regression", weekly)
	}
	if d := weekly[0].FirstBad; d < "20260801" || d > "20260829" {
		t.Errorf("first bad period %s; want among the periods of the ramp (20260801 to 20260829)", d)
	}

	// The API serves the page's and the origin's periods.
	var body struct {
		Result struct {
			Page, Origin struct {
				Device  string
				Periods []map[string]any
			}
		}
	}
	h.Call(t, "GET", "/"+site.ID+"/pages/"+page.ID+"/ux-history?device=mobile", "", 200, &body)
	if n := len(body.Result.Page.Periods); n != 40 {
		t.Fatalf("API: %d page periods", n)
	}
	last := body.Result.Page.Periods[39]
	if last["date"] != "2026-11-21" || last["firstDate"] != "2026-10-25" || last["ux_lcp"] != float64(3000) || body.Result.Page.Periods[0]["ux_lcp"] != nil {
		t.Errorf("API periods: first %v, last %v", body.Result.Page.Periods[0], last)
	}
	if len(body.Result.Origin.Periods) != 40 {
		t.Errorf("API: %d origin periods", len(body.Result.Origin.Periods))
	}

	// The daily collection asks again a week after, not before.
	calls := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return g.historyCalls["https://example.com/pricing PHONE"]
	}
	if _, err := c.Collect(e.ctx, ux.Job{Account: "acme", Website: site.ID, Day: model.Day(e.clock.Now())}, 1); err != nil {
		t.Fatal(err)
	}
	if n := calls(); n != 1 {
		t.Errorf("history asked %d times the same day; want once", n)
	}
	e.clock.now = e.clock.now.Add(model.UXHistoryRefresh)
	if _, err := c.Collect(e.ctx, ux.Job{Account: "acme", Website: site.ID, Day: model.Day(e.clock.Now())}, 1); err != nil {
		t.Fatal(err)
	}
	if n := calls(); n != 2 {
		t.Errorf("history asked %d times after a week; want twice", n)
	}
}
