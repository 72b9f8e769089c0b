package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// labFixture is a website with two pages, budgets, and stored lab results of several days.
type labFixture struct {
	site             website
	stored           model.Website // site as the store has it
	home, pricing    page
	lcp, cls, perf   budget
	today, firstSeen time.Time
}

func day(t time.Time, back int) string { return model.Day(t.AddDate(0, 0, -back)) }

// desktopToday is today's desktop result of the fixture's page p, as the store has it.
func (f labFixture) desktopToday(t *testing.T, e *testEnv, p page) model.LabResult {
	t.Helper()
	today := model.Day(f.today)
	rs, err := e.store.LabResults(context.Background(), f.stored, p.ID, "desktop", today, today)
	if err != nil || len(rs) != 1 {
		t.Fatalf("today's result of %s: %v %v", p.URL, rs, err)
	}
	return rs[0]
}

func newLabFixture(t *testing.T, e *testEnv) labFixture {
	t.Helper()
	ctx := context.Background()
	f := labFixture{site: e.createWebsite("example.com"), today: time.Now().UTC()}
	ps := e.createPages(f.site.ID, "/", "/pricing")
	f.home, f.pricing = ps[0], ps[1]
	path := "/" + f.site.ID + "/budgets"
	e.do("POST", path, apitest.AdminKey, `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`).Want(t, 201).Decode(t, &f.lcp)
	e.do("POST", path, apitest.AdminKey, `{"metric":"cls","operator":"lt","value":0.1,"device":"mobile"}`).Want(t, 201).Decode(t, &f.cls)
	e.do("POST", path, apitest.AdminKey, `{"metric":"performance_score","operator":"gt","value":90,"device":"desktop"}`).Want(t, 201).Decode(t, &f.perf)

	w := e.storedWebsite(f.site.ID)
	f.stored = w
	put := func(p page, device string, back int, m map[string]float64, opps ...string) {
		t.Helper()
		r := model.LabResult{Page: p.ID, Device: device, Day: day(f.today, back), Metrics: m, LighthouseVersion: "13.5.0", Runs: 3,
			ReportKey: fmt.Sprintf("acme/%s/pages/%s/%s-%s.json.gz", f.site.ID, p.ID, day(f.today, back), device)}
		for _, o := range opps {
			r.Opportunities = append(r.Opportunities, model.Opportunity{ID: o, Title: "Title of " + o, Category: "performance", Description: "About " + o,
				DisplayValue: "Est savings of 1 s", SavingsMs: labSavings[o].SavingsMs, SavingsBytes: labSavings[o].SavingsBytes, MetricSavings: labSavings[o].MetricSavings})
		}
		if err := e.store.PutLabResult(ctx, w, storedPage(t, e, w, p.ID), r); err != nil {
			t.Fatal(err)
		}
		report := map[string]any{"lighthouseVersion": "13.5.0", "audits": map[string]any{}}
		for _, o := range opps {
			report["audits"].(map[string]any)[o] = map[string]any{"id": o, "score": 0.5, "details": map[string]any{"type": "opportunity"}}
		}
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		_ = json.NewEncoder(zw).Encode(report)
		_ = zw.Close()
		if err := e.objects.Put(ctx, r.ReportKey, gz.Bytes(), "application/gzip"); err != nil {
			t.Fatal(err)
		}
	}
	metrics := func(lcp, perf, cls float64) map[string]float64 {
		return map[string]float64{"fcp": 900.4, "lcp": lcp, "cls": cls, "tbt": 120, "ttfb": 80.6, "speed_index": 1500, "tti": 2000,
			"performance_score": perf, "accessibility_score": 88, "best_practices_score": 100, "seo_score": 91, "kb_total": 640.2,
			"cpu_total": 700, "dns_time": 3, "connect_time": 4, "server_time": 51, "transfer_time": 2, "dom_ready": 800, "on_load": 1900,
			"dom_elements": 412, "dom_max_depth": 12, "validation_errors": 7, "bytes_total": 655564, "bytes_doc": 4000,
			"bytes_image": 500000, "bytes_js": 100000, "bytes_css": 30000, "bytes_font": 20000, "bytes_media": 0, "bytes_other": 1564, "bytes_thirdparty": 12000}
	}
	// Home on desktop: 5 days; the last 3 average lcp 2400 (at risk of lt 2500), performance 93.
	for back, lcp := range []float64{2500, 2400, 2300, 3000, 3000} {
		put(f.home, "desktop", back, metrics(lcp, 93, 0.01), "render-blocking-insight", "image-delivery-insight")
	}
	f.firstSeen, _ = time.Parse(model.DayLayout, day(f.today, 4))
	// Home on mobile: one day over both the lcp and the cls budget, no performance score.
	m := metrics(4000, 0, 0.12345)
	delete(m, "performance_score")
	put(f.home, "mobile", 1, m, "image-delivery-insight")
	// Pricing on desktop: fine; nothing on mobile.
	put(f.pricing, "desktop", 0, metrics(1000, 100, 0))
	return f
}

// labSavings are the fixture's opportunities' estimated savings: image delivery saves 500 ms of
// LCP (impact 25 x 500/2500 = 5) and 20 KB, render blocking 300 ms of FCP (10 x 300/1800 = 1.7).
var labSavings = map[string]model.Opportunity{
	"image-delivery-insight":  {SavingsMs: 500, SavingsBytes: 20000, MetricSavings: map[string]float64{"LCP": 500, "FCP": 0}},
	"render-blocking-insight": {SavingsMs: 300, MetricSavings: map[string]float64{"FCP": 300, "LCP": 0}},
}

func TestPagesWithMetrics(t *testing.T) {
	e := newTestEnv(t)
	f := newLabFixture(t, e)

	type metricsJSON map[string]any
	type record struct {
		ID, Alias, URL, Device string
		Timeline               []metricsJSON
		Latest                 metricsJSON
	}
	got := apitest.List[record](t, e.do("GET", "/"+f.site.ID+"/pages", apitest.ViewerKey, nil).Want(t, 200))
	if len(got) != 4 {
		t.Fatalf("%d records, want one per page and device", len(got))
	}
	by := map[string]record{}
	for _, r := range got {
		by[r.URL+" "+r.Device] = r
	}
	hd := by["/ desktop"]
	if len(hd.Timeline) != 5 || hd.Timeline[0]["date"] != model.DayToISO(day(f.today, 4)) || hd.Timeline[4]["date"] != model.DayToISO(day(f.today, 0)) {
		t.Errorf("home desktop timeline %v", hd.Timeline)
	}
	want := map[string]any{"lcp": 2400.0, "fcp": 900.0, "ttfb": 81.0, "kb_total": 640.0, "performance_score": 93.0, "cls": 0.01,
		"budgets_exceeded": 0.0, "budgets_at_risk": 2.0, "opportunities": 2.0}
	for k, v := range want {
		if hd.Latest[k] != v {
			t.Errorf("home desktop latest %s = %v, want %v", k, hd.Latest[k], v)
		}
	}
	if hd.Timeline[4]["budgets_exceeded"] != 1.0 || hd.Timeline[0]["budgets_at_risk"] != 1.0 {
		t.Errorf("per-day budget counts: oldest %v, newest %v", hd.Timeline[0], hd.Timeline[4])
	}
	hm := by["/ mobile"]
	if hm.Latest["performance_score"] != nil || hm.Latest["cls"] != 0.1235 || hm.Latest["budgets_exceeded"] != 2.0 {
		t.Errorf("home mobile latest %v: unmeasured fields are null, cls to 4 decimals, 2 budgets exceeded", hm.Latest)
	}
	if pm := by["/pricing mobile"]; len(pm.Timeline) != 0 || pm.Latest != nil {
		t.Errorf("pricing mobile without results: %+v", pm)
	}
}

func TestBudgetStatus(t *testing.T) {
	e := newTestEnv(t)
	f := newLabFixture(t, e)
	got := map[string]budgetStatus{}
	for _, b := range apitest.List[budgetStatus](t, e.do("GET", "/"+f.site.ID+"/budgets", apitest.AdminKey, nil).Want(t, 200)) {
		got[b.ID] = b
	}
	lcp := got[f.lcp.ID]
	if lcp.Status != "exceeded" || len(lcp.Pages) != 2 {
		t.Fatalf("lcp budget %+v: home mobile exceeds it, home desktop is at risk", lcp)
	}
	for _, p := range lcp.Pages {
		want := map[string]string{"desktop": "at-risk", "mobile": "exceeded"}[p.Device]
		if p.ID != f.home.ID || p.Alias != "/" || p.Status != want {
			t.Errorf("lcp budget page %+v, want home with %s", p, want)
		}
	}
	if cls := got[f.cls.ID]; cls.Status != "exceeded" || len(cls.Pages) != 1 || cls.Pages[0].Device != "mobile" {
		t.Errorf("cls budget %+v", cls)
	}
	// performance gt 90 on desktop: home at 93 is within 10% (at risk), pricing at 100 is fine.
	if perf := got[f.perf.ID]; perf.Status != "at-risk" || len(perf.Pages) != 1 || perf.Pages[0].ID != f.home.ID {
		t.Errorf("performance budget %+v", perf)
	}
}

func TestPageDetailTimelineNetwork(t *testing.T) {
	e := newTestEnv(t)
	f := newLabFixture(t, e)
	base := "/" + f.site.ID + "/pages/" + f.home.ID

	var detail struct {
		ID, URL, Alias, Device string
		LatestMetrics          map[string]any
		LastError              *struct{ Message string }
	}
	e.do("GET", base+"?device=desktop", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &detail)
	if detail.ID != f.home.ID || detail.Device != "desktop" || detail.LatestMetrics["validation_errors"] != 7.0 || detail.LatestMetrics["lcp"] != 2400.0 || detail.LastError != nil {
		t.Errorf("detail %+v", detail)
	}
	w, _ := e.store.Website(context.Background(), "acme", f.site.ID)
	if err := e.store.PutLabError(context.Background(), w, storedPage(t, e, w, f.pricing.ID), "mobile", model.LabError{Message: "net::ERR_NAME_NOT_RESOLVED", At: time.Now(), Attempts: 3}); err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/"+f.site.ID+"/pages/"+f.pricing.ID+"?device=mobile", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &detail)
	if detail.LatestMetrics != nil || detail.LastError == nil || detail.LastError.Message != "net::ERR_NAME_NOT_RESOLVED" {
		t.Errorf("failing page detail %+v", detail)
	}
	e.do("GET", base, apitest.ViewerKey, nil).Want(t, 400).Problem(t, "device")
	e.do("GET", base+"?device=tablet", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "device")
	e.do("GET", "/"+f.site.ID+"/pages/nosuchpage?device=mobile", apitest.ViewerKey, nil).Want(t, 404)

	var timeline struct{ Result []map[string]any }
	e.do("GET", base+"/timeline?device=desktop", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &timeline)
	if len(timeline.Result) != 5 || timeline.Result[0]["count"] != 3.0 || timeline.Result[0]["method"] != model.MethodSimulated || timeline.Result[4]["dom_elements"] != 412.0 || timeline.Result[4]["dns_time"] != 3.0 {
		t.Errorf("timeline %v", timeline.Result)
	}
	rng := day(f.today, 3) + "-" + day(f.today, 1)
	e.do("GET", base+"/timeline?device=desktop&date="+rng, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &timeline)
	if len(timeline.Result) != 3 || timeline.Result[0]["lcp"] != 3000.0 {
		t.Errorf("timeline in %s: %v", rng, timeline.Result)
	}
	for _, bad := range []string{"20261301-20261302", "2026111-20261120", "20261120", day(f.today, 1) + "-" + day(f.today, 3), "20200101-20261120", "abc"} {
		e.do("GET", base+"/timeline?device=desktop&date="+bad, apitest.ViewerKey, nil).Want(t, 400).Problem(t, "date")
	}
	e.do("GET", base+"/timeline", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "device")

	// Scores and every lab metric, over any range: a day 200 days back is in a year's timeline.
	w2, _ := e.store.Website(context.Background(), "acme", f.site.ID)
	old := model.LabResult{Page: f.home.ID, Device: "desktop", Day: day(f.today, 200), Runs: 1, LighthouseVersion: "13.5.0",
		Metrics: map[string]float64{"lcp": 5000, "performance_score": 41, "seo_score": 77, "kb_total": 901.6}}
	if err := e.store.PutLabResult(context.Background(), w2, storedPage(t, e, w2, f.home.ID), old); err != nil {
		t.Fatal(err)
	}
	e.do("GET", base+"/timeline?device=desktop&date="+day(f.today, 364)+"-"+day(f.today, 0), apitest.ViewerKey, nil).Want(t, 200).Decode(t, &timeline)
	if n := len(timeline.Result); n != 6 {
		t.Fatalf("a year's timeline has %d days, want 6", n)
	}
	first, last := timeline.Result[0], timeline.Result[5]
	if first["performance_score"] != 41.0 || first["seo_score"] != 77.0 || first["kb_total"] != 902.0 || first["accessibility_score"] != nil || first["opportunities"] != 0.0 {
		t.Errorf("the day 200 days back: %v", first)
	}
	if last["performance_score"] != 93.0 || last["best_practices_score"] != 100.0 || last["cpu_total"] != 700.0 || last["opportunities"] != 2.0 {
		t.Errorf("the last day: %v", last)
	}

	var network struct{ Result []map[string]any }
	e.do("GET", base+"/network?device=desktop", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &network)
	if len(network.Result) != 5 || network.Result[0]["bytes_image"] != 500000.0 || network.Result[0]["bytes_thirdparty"] != 12000.0 {
		t.Errorf("network %v", network.Result)
	}
}

func TestOpportunities(t *testing.T) {
	e := newTestEnv(t)
	f := newLabFixture(t, e)

	type savings struct {
		Rank                            int
		Impact, SavingsMs, SavingsBytes float64
		MetricSavings                   map[string]float64
		CategoryTitle                   string
	}
	var site struct {
		Result struct {
			List map[string]struct {
				Title, Category, Description string
				StartDate                    time.Time
				Pages                        []struct {
					ID, Alias, URL, Device string
					Impact, SavingsMs      float64
				}
				savings
			}
		}
	}
	e.do("GET", "/"+f.site.ID+"/opportunities", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &site)
	img, rb := site.Result.List["image-delivery-insight"], site.Result.List["render-blocking-insight"]
	if len(site.Result.List) != 2 || len(img.Pages) != 2 || img.Category != "performance" || !img.StartDate.Equal(f.firstSeen) || img.Description == "" {
		t.Errorf("website opportunities %+v (first seen %v)", site.Result.List, f.firstSeen)
	}
	// Image delivery fails on home's both devices: 2 x 5 over the website, ranked first.
	if img.Rank != 1 || img.Impact != 10 || img.SavingsMs != 1000 || img.SavingsBytes != 40000 || img.MetricSavings["LCP"] != 1000 ||
		img.CategoryTitle != "Performance" || img.Pages[0].Impact != 5 || img.Pages[0].SavingsMs != 500 ||
		rb.Rank != 2 || rb.Impact != 1.7 || rb.SavingsMs != 300 {
		t.Errorf("website savings: image delivery %+v, render blocking %+v", img, rb)
	}

	var pageOpps struct {
		Result struct {
			LighthouseVersion *string
			List              map[string]struct {
				ID, Title, Category, DisplayValue string
				savings
			}
		}
	}
	base := "/" + f.site.ID + "/pages/" + f.home.ID + "/opportunities"
	e.do("GET", base+"?device=desktop", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &pageOpps)
	if v := pageOpps.Result.LighthouseVersion; v == nil || *v != "13.5.0" || len(pageOpps.Result.List) != 2 || pageOpps.Result.List["render-blocking-insight"].ID != "render-blocking-insight" {
		t.Errorf("page opportunities %+v", pageOpps.Result)
	}
	pimg, prb := pageOpps.Result.List["image-delivery-insight"], pageOpps.Result.List["render-blocking-insight"]
	if pimg.Rank != 1 || pimg.Impact != 5 || pimg.SavingsBytes != 20000 || pimg.MetricSavings["LCP"] != 500 || pimg.CategoryTitle != "Performance" ||
		prb.Rank != 2 || prb.Impact != 1.7 || prb.MetricSavings["FCP"] != 300 {
		t.Errorf("page savings: image delivery %+v, render blocking %+v", pimg, prb)
	}
	pageOpps.Result.List, pageOpps.Result.LighthouseVersion = nil, nil
	e.do("GET", "/"+f.site.ID+"/pages/"+f.pricing.ID+"/opportunities?device=mobile", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &pageOpps)
	if pageOpps.Result.LighthouseVersion != nil || len(pageOpps.Result.List) != 0 {
		t.Errorf("page without results: %+v", pageOpps.Result)
	}

	var audit map[string]any
	e.do("GET", base+"/image-delivery-insight?device=desktop", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &audit)
	if audit["id"] != "image-delivery-insight" || audit["score"] != 0.5 {
		t.Errorf("opportunity detail %v", audit)
	}
	e.do("GET", base+"/no-such-audit?device=desktop", apitest.ViewerKey, nil).Want(t, 404).Problem(t)
	e.do("GET", "/"+f.site.ID+"/pages/"+f.pricing.ID+"/opportunities/image-delivery-insight?device=mobile", apitest.ViewerKey, nil).Want(t, 404)
	e.do("GET", base+"/image-delivery-insight?device=desktop", apitest.OtherKey, nil).Want(t, 404)
}

func TestAuditsOnDemand(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	ps := e.createPages(site.ID, "/", "/pricing")
	path := "/" + site.ID + "/audits"
	queued := func(res response) int {
		var out struct{ Queued int }
		res.Want(t, 202).Decode(t, &out)
		return out.Queued
	}
	if n := queued(e.do("POST", path, apitest.AdminKey, nil)); n != 4 {
		t.Errorf("no body queued %d, want 4 (2 pages, 2 devices)", n)
	}
	if n := queued(e.do("POST", path, apitest.AdminKey, `{"pages":["`+ps[1].ID+`"],"devices":["mobile","mobile"]}`)); n != 1 {
		t.Errorf("one page on mobile queued %d", n)
	}
	e.do("POST", path, apitest.AdminKey, `{"pages":["nosuchpage"]}`).Want(t, 422).Problem(t, "pages[0]")
	e.do("POST", path, apitest.AdminKey, `{"devices":["tablet"]}`).Want(t, 422).Problem(t, "devices[0]")
	e.do("POST", path, apitest.ViewerKey, nil).Want(t, 403)
	e.do("POST", path, apitest.OtherKey, nil).Want(t, 404)

	if got := awstest.Receive(t, e.audits, 5); len(got) != 5 {
		t.Errorf("%d messages on the audit queue, want 5: %v", len(got), got)
	}
}

// TestPagesListFollowsResults: the pages list reads each page's summary, and shows what was
// stored after the summary was made (a stored result marks it stale), on a website whose pages
// have rows and on one stored before rows existed; the budget status reads the same values.
func TestPagesListFollowsResults(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	site := e.createWebsite("example.com")
	ps := e.createPages(site.ID, "/", "/pricing")
	e.do("POST", "/"+site.ID+"/budgets", apitest.AdminKey, `{"metric":"lcp","operator":"lt","value":2500,"device":"mobile"}`).Want(t, 201)
	w := e.storedWebsite(site.ID)
	type record struct {
		ID, Device string
		Timeline   []map[string]any
		Latest     map[string]any
	}
	lcp := func(pageID, device string) any {
		t.Helper()
		for _, r := range apitest.List[record](t, e.do("GET", "/"+site.ID+"/pages", apitest.ViewerKey, nil).Want(t, 200)) {
			if r.ID == pageID && r.Device == device {
				return r.Latest["lcp"]
			}
		}
		t.Fatalf("page %s %s not listed", pageID, device)
		return nil
	}
	budgetStatus := func() string {
		t.Helper()
		var out struct {
			Result struct{ List []struct{ Status string } }
		}
		e.do("GET", "/"+site.ID+"/budgets", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &out)
		return out.Result.List[0].Status
	}
	if got := lcp(ps[0].ID, "mobile"); got != nil {
		t.Errorf("lcp %v before any result", got)
	}
	home := storedPage(t, e, w, ps[0].ID)
	put := func(back int, v float64) {
		t.Helper()
		r := model.LabResult{Device: "mobile", Day: day(time.Now().UTC(), back), Metrics: map[string]float64{"lcp": v}}
		if err := e.store.PutLabResult(ctx, w, home, r); err != nil {
			t.Fatal(err)
		}
	}
	put(1, 2000)
	if got, status := lcp(ps[0].ID, "mobile"), budgetStatus(); got != 2000.0 || status != "ok" {
		t.Errorf("after a result: lcp %v, budget %s; want 2000, ok", got, status)
	}
	put(0, 4000) // after the summary was made
	if got, status := lcp(ps[0].ID, "mobile"), budgetStatus(); got != 3000.0 || status != "exceeded" {
		t.Errorf("after a second result: lcp %v, budget %s; want the mean 3000, exceeded", got, status)
	}
	if got := lcp(ps[1].ID, "mobile"); got != nil {
		t.Errorf("pricing has lcp %v without a result", got)
	}

	// Stored before rows existed: no row, the website unmarked; the list makes them.
	table := awstest.TableOf(t, e.clients, e.store)
	for _, p := range []model.Page{home, storedPage(t, e, w, ps[1].ID)} {
		table.Delete(awstest.WebsitePK("acme", w.ID), "ROW#"+store.PageOrderKey(p))
	}
	table.Remove("A#acme", "W#"+w.ID, "PageRows")
	if got := lcp(ps[0].ID, "mobile"); got != 3000.0 {
		t.Errorf("a website stored before rows: lcp %v, want 3000", got)
	}
	if got := len(apitest.List[record](t, e.do("GET", "/"+site.ID+"/pages", apitest.ViewerKey, nil).Want(t, 200))); got != 4 {
		t.Errorf("%d records, want 2 pages on 2 devices", got)
	}
}
