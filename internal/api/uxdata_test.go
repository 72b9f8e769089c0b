package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// TestFieldDataInPages shows how the user-experience dataset and search analytics appear in the
// lab endpoints: ux_* fields per day and in latest (each family averaged over its own last 3
// days), latestUx in the page detail, budgets on ux_* fields, and the search fields only for
// the website with the Search Console integration.
func TestFieldDataInPages(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	today := time.Now().UTC()
	site := e.createWebsite("example.com")
	pages := e.createPages(site.ID, "/", "/pricing")
	home, pricing := pages[0], pages[1]
	var uxBudget, lcpBudget budget
	e.do("POST", "/"+site.ID+"/budgets", apitest.AdminKey, `{"metric":"ux_lcp","operator":"lt","value":2500,"device":"mobile"}`).Want(t, 201).Decode(t, &uxBudget)
	e.do("POST", "/"+site.ID+"/budgets", apitest.AdminKey, `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`).Want(t, 201).Decode(t, &lcpBudget)
	w := e.storedWebsite(site.ID)

	vital := func(p75, good, ni, poor float64) model.Vital {
		return model.Vital{P75: p75, Good: good, NeedsImprovement: ni, Poor: poor}
	}
	putUX := func(p page, device string, back int, vitals map[string]model.Vital) {
		t.Helper()
		if err := e.store.PutUXResult(ctx, w, storedPage(t, e, w, p.ID), model.UXResult{Device: device, Day: day(today, back), Vitals: vitals, Collected: today}); err != nil {
			t.Fatal(err)
		}
	}
	// Home on mobile: four records; the oldest (good LCP and CLS, poor INP) falls outside the
	// last 3, the third has no INP.
	putUX(home, "mobile", 4, map[string]model.Vital{"lcp": vital(2000, 90, 5, 5), "inp": vital(250, 60, 30, 10), "cls": vital(0.02, 95, 3, 2)})
	putUX(home, "mobile", 2, map[string]model.Vital{"lcp": vital(2400, 80, 15, 5), "inp": vital(180, 85, 10, 5), "cls": vital(0.05, 90, 6, 4),
		"fcp": vital(1500, 81.25, 12.5, 6.25), "ttfb": vital(700, 70, 20, 10)})
	putUX(home, "mobile", 1, map[string]model.Vital{"lcp": vital(2600, 70, 20, 10), "cls": vital(0.07, 88, 8, 4)})
	putUX(home, "mobile", 0, map[string]model.Vital{"lcp": vital(2300, 84, 11, 5), "inp": vital(190, 86, 9, 5), "cls": vital(0.06, 89, 7, 4)})
	// One lab result on each of home's devices.
	lab := func(p page, device string, back int, lcp float64) {
		t.Helper()
		r := model.LabResult{Page: p.ID, Device: device, Day: day(today, back), Runs: 1, LighthouseVersion: "13.5.0",
			Metrics: map[string]float64{"lcp": lcp, "fcp": 900, "cls": 0.01, "validation_errors": 2}}
		if err := e.store.PutLabResult(ctx, w, storedPage(t, e, w, p.ID), r); err != nil {
			t.Fatal(err)
		}
	}
	lab(home, "mobile", 1, 4000)
	lab(home, "desktop", 0, 1200)
	// Search analytics of home (two days) and pricing (no impressions).
	search := []model.SearchResult{
		{Page: home.ID, Day: day(today, 1), Impressions: 1000, Clicks: 50, Position: 3.4},
		{Page: home.ID, Day: day(today, 0), Impressions: 1200, Clicks: 66, Position: 2.6},
		{Page: pricing.ID, Day: day(today, 0)},
	}
	if err := e.store.PutSearchResults(ctx, w, []model.Page{storedPage(t, e, w, home.ID), storedPage(t, e, w, pricing.ID)}, search); err != nil {
		t.Fatal(err)
	}

	type record struct {
		ID, URL, Device string
		Timeline        []map[string]any
		Latest          map[string]any
	}
	read := func(siteID string) map[string]record {
		t.Helper()
		out := map[string]record{}
		for _, r := range apitest.List[record](t, e.do("GET", "/"+siteID+"/pages", apitest.ViewerKey, nil).Want(t, 200)) {
			out[r.URL+" "+r.Device] = r
		}
		return out
	}
	searchKeys := []string{"impressions", "clicks", "CTR", "position"}

	// Without the integration: no search fields anywhere, stored analytics or not.
	by := read(site.ID)
	for k, r := range by {
		for _, item := range append(r.Timeline, r.Latest) {
			for _, f := range searchKeys {
				if _, ok := item[f]; ok {
					t.Errorf("%s has %s without the integration: %v", k, f, item)
				}
			}
		}
	}

	hm := by["/ mobile"]
	if len(hm.Timeline) != 4 {
		t.Fatalf("home mobile timeline has %d days, want the 4 with a record: %v", len(hm.Timeline), hm.Timeline)
	}
	wantLatest := map[string]any{"ux_lcp": 2433.0, "ux_inp": 185.0, "ux_cls": 0.06, "ux_fcp": 1500.0, "ux_ttfb": 700.0, "ux_passed": 1.0,
		"lcp": 4000.0, "budgets_exceeded": 1.0, "budgets_at_risk": 1.0, "opportunities": 0.0}
	for k, v := range wantLatest {
		if hm.Latest[k] != v {
			t.Errorf("home mobile latest %s = %v, want %v", k, hm.Latest[k], v)
		}
	}
	if _, ok := hm.Latest["ux_fid"]; ok {
		t.Error("ux_fid is there: the dataset has no First Input Delay")
	}
	oldest, noINP := hm.Timeline[0], hm.Timeline[2]
	if oldest["date"] != model.DayToISO(day(today, 4)) || oldest["ux_lcp"] != 2000.0 || oldest["ux_inp"] != 250.0 || oldest["ux_passed"] != 0.0 ||
		oldest["lcp"] != nil || oldest["opportunities"] != nil || oldest["budgets_exceeded"] != 0.0 || oldest["budgets_at_risk"] != 0.0 {
		t.Errorf("oldest day %v: ux values (not passed for INP alone), no lab values, no budget at risk", oldest)
	}
	if _, ok := noINP["ux_inp"]; ok || noINP["ux_passed"] != 0.0 || noINP["lcp"] != 4000.0 || noINP["budgets_exceeded"] != 2.0 || noINP["opportunities"] != 0.0 {
		t.Errorf("day without INP %v: passed judged on LCP 2600 and CLS, lab values, both lcp budgets exceeded", noINP)
	}
	if hm.Timeline[1]["ux_passed"] != 1.0 || hm.Timeline[3]["ux_passed"] != 1.0 {
		t.Errorf("days with good vitals: %v, %v", hm.Timeline[1], hm.Timeline[3])
	}
	hd := by["/ desktop"]
	if hd.Latest["lcp"] != 1200.0 || len(hd.Timeline) != 1 {
		t.Errorf("home desktop %+v", hd)
	}
	for k := range hd.Latest {
		if len(k) > 3 && k[:3] == "ux_" {
			t.Errorf("home desktop has %s without a record", k)
		}
	}

	// Page detail: latestUx with one object per vital, averaged over the last 3 records.
	var detail struct {
		LatestMetrics map[string]any
		LatestUx      map[string]any
	}
	e.do("GET", "/"+site.ID+"/pages/"+home.ID+"?device=mobile", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &detail)
	ux := detail.LatestUx
	if ux["id"] != home.ID || ux["device"] != "mobile" || ux["passed"] != true {
		t.Errorf("latestUx %v", ux)
	}
	wantVitals := map[string]map[string]any{
		"lcp":  {"value": 2433.0, "green": 78.0, "yellow": 15.33, "red": 6.67},
		"inp":  {"value": 185.0, "green": 85.5, "yellow": 9.5, "red": 5.0},
		"cls":  {"value": 0.06, "green": 89.0, "yellow": 7.0, "red": 4.0},
		"fcp":  {"value": 1500.0, "green": 81.25, "yellow": 12.5, "red": 6.25},
		"ttfb": {"value": 700.0, "green": 70.0, "yellow": 20.0, "red": 10.0},
	}
	for name, want := range wantVitals {
		got, _ := ux[name].(map[string]any)
		for k, v := range want {
			if got[k] != v {
				t.Errorf("latestUx %s.%s = %v, want %v", name, k, got[k], v)
			}
		}
	}
	if _, ok := ux["fid"]; ok {
		t.Error("latestUx has fid")
	}
	if detail.LatestMetrics["lcp"] != 4000.0 || detail.LatestMetrics["budgets_exceeded"] != 1.0 || detail.LatestMetrics["budgets_at_risk"] != 1.0 {
		t.Errorf("latestMetrics %v: lcp over its budget, ux_lcp 2433 at risk of its own", detail.LatestMetrics)
	}
	e.do("GET", "/"+site.ID+"/pages/"+home.ID+"?device=desktop", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &detail)
	if detail.LatestUx != nil {
		t.Errorf("home desktop latestUx %v, want null without a record", detail.LatestUx)
	}

	// Budgets judge ux_* fields on the latest values.
	for _, b := range apitest.List[budgetStatus](t, e.do("GET", "/"+site.ID+"/budgets", apitest.ViewerKey, nil).Want(t, 200)) {
		if b.ID == uxBudget.ID && (b.Status != "at-risk" || len(b.Pages) != 1 || b.Pages[0].ID != home.ID || b.Pages[0].Device != "mobile") {
			t.Errorf("ux_lcp budget %+v, want home on mobile at risk (2433 against 2500)", b)
		}
	}

	// With the integration: the four fields on both devices of every page.
	if err := e.store.PutSearchConsole(ctx, w, model.SearchConsole{Property: "sc-domain:example.com", ServiceAccount: "a@b.iam.gserviceaccount.com",
		Credentials: []byte{1, 2, 3}, Created: today, Updated: today}); err != nil {
		t.Fatal(err)
	}
	by = read(site.ID)
	for _, k := range []string{"/ mobile", "/ desktop"} {
		l := by[k].Latest
		if l["impressions"] != 1100.0 || l["clicks"] != 58.0 || l["CTR"] != 5.25 || l["position"] != 3.0 {
			t.Errorf("%s latest search fields %v, want the mean of the last 2 days", k, l)
		}
	}
	hm = by["/ mobile"]
	if d := hm.Timeline[2]; d["impressions"] != 1000.0 || d["CTR"] != 5.0 || d["position"] != 3.0 {
		t.Errorf("home mobile day with search analytics %v", d)
	}
	if d := hm.Timeline[0]; d["impressions"] != nil || d["CTR"] != nil {
		t.Errorf("home mobile day without search analytics %v: search fields null", d)
	}
	pd := by["/pricing desktop"]
	if len(pd.Timeline) != 1 || pd.Latest["impressions"] != 0.0 || pd.Latest["clicks"] != 0.0 || pd.Latest["CTR"] != nil || pd.Latest["position"] != nil || pd.Latest["lcp"] != nil {
		t.Errorf("pricing desktop %+v: no impressions, so no CTR or position", pd)
	}
}
