package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

type comparisonOut struct {
	Page struct {
		ID string `json:"id"`
	} `json:"page"`
	Device string `json:"device"`
	Base   struct {
		Date   string `json:"date"`
		Test   string `json:"test"`
		Runs   int    `json:"runs"`
		Method string `json:"method"`
	} `json:"base"`
	Target struct {
		Date   string `json:"date"`
		Test   string `json:"test"`
		Method string `json:"method"`
	} `json:"target"`
	Metrics []compare.Metric `json:"metrics"`
}

// TestCompareAPI: two days of a page on a device side by side (metrics, changes, the runs'
// spreads), a day against a test series' test; unknown days and tests, tests of another page,
// another account's page: 404; bad parameters: 400 naming them.
func TestCompareAPI(t *testing.T) {
	e := newTestEnv(t)
	site, pages, w := e.createSite("example.com", "/", "/shop")
	ctx := context.Background()
	home := storedPage(t, e, w, pages[0].ID)
	put := func(day string, lcp float64, lcpRuns []float64, extra map[string]float64) {
		t.Helper()
		m := map[string]float64{"lcp": lcp, "performance_score": 90}
		for k, v := range extra {
			m[k] = v
		}
		r := model.LabResult{Device: "mobile", Day: day, Runs: len(lcpRuns), Metrics: m, Samples: map[string][]float64{"lcp": lcpRuns},
			Audited: time.Date(2026, 11, 10, 3, 0, 0, 0, time.UTC)}
		if err := e.store.PutLabResult(ctx, w, home, r); err != nil {
			t.Fatal(err)
		}
	}
	put("20261110", 1500, []float64{1450, 1500, 1520, 1490, 1530}, map[string]float64{"dom_elements": 300})
	put("20261111", 2100, []float64{2050, 2100, 2150, 2080, 2120}, map[string]float64{"bytes_script": 400})
	put("20261112", 2900, []float64{2900}, nil)
	applied, err := e.store.LabResults(ctx, w, home.ID, "mobile", "20261112", "20261112")
	if err != nil || len(applied) != 1 {
		t.Fatal(applied, err)
	}
	applied[0].Method = model.MethodApplied
	if err := e.store.PutLabResult(ctx, w, home, applied[0]); err != nil {
		t.Fatal(err)
	}

	base := "/" + site.ID + "/pages/" + pages[0].ID + "/compare?device=mobile"
	var c comparisonOut
	e.do("GET", base+"&base=2026-11-10&target=2026-11-11", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &c)
	if c.Page.ID != pages[0].ID || c.Device != "mobile" || c.Base.Date != "2026-11-10" || c.Target.Date != "2026-11-11" || c.Base.Runs != 5 ||
		c.Base.Method != model.MethodSimulated || c.Target.Method != model.MethodSimulated {
		t.Errorf("comparison of %+v", c)
	}
	// Each side names its method: a day measured by applied throttling against one simulated.
	var switched comparisonOut
	e.do("GET", base+"&base=2026-11-11&target=2026-11-12", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &switched)
	if switched.Base.Method != model.MethodSimulated || switched.Target.Method != model.MethodApplied {
		t.Errorf("methods %q and %q, want simulated and applied", switched.Base.Method, switched.Target.Method)
	}
	if len(c.Metrics) != 4 || c.Metrics[0].Name != "performance_score" || c.Metrics[1].Name != "lcp" {
		t.Fatalf("metrics %+v, want the watched first, then the others", c.Metrics)
	}
	lcp := c.Metrics[1]
	if *lcp.Delta != 600 || *lcp.Percent != 40 || *lcp.BaseSpread != 30 || *lcp.TargetSpread != 40 || !lcp.BeyondSpread || lcp.Unit != "ms" {
		t.Errorf("lcp %+v: want +600 ms (40 %%), spreads 30 and 40, beyond them", lcp)
	}
	if s := c.Metrics[0]; *s.Delta != 0 || s.BeyondSpread || s.BaseSpread != nil {
		t.Errorf("score %+v: no change, no spread", s)
	}
	for _, m := range c.Metrics[2:] {
		if (m.Base == nil) == (m.Target == nil) || m.Delta != nil {
			t.Errorf("%s measured on one day only: %+v", m.Name, m)
		}
	}

	// A test series' test of the page against a day.
	series := model.TestSeries{ID: model.NewSeriesID(time.Now()), Created: time.Now(), Count: 2}
	own := model.SeriesTest{ID: model.SeriesTestID(series.ID, 0), Series: series.ID, Page: home.ID, URL: home.URL, Device: "mobile", Status: model.RunQueued}
	other := model.SeriesTest{ID: model.SeriesTestID(series.ID, 1), Series: series.ID, Page: pages[1].ID, URL: "/shop", Device: "mobile", Status: model.RunQueued}
	if err := e.store.CreateTestSeries(ctx, w, series, []model.SeriesTest{own, other}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []model.SeriesTest{own, other} {
		if _, err := e.store.FinishSeriesTest(ctx, w, model.SeriesTest{ID: tt.ID, Series: series.ID, Status: model.RunCompleted,
			Metrics: map[string]float64{"lcp": 1800, "performance_score": 80}}); err != nil {
			t.Fatal(err)
		}
	}
	c = comparisonOut{}
	e.do("GET", base+"&base=2026-11-10&target="+own.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &c)
	if c.Target.Test != own.ID || c.Target.Date != "" || *c.Metrics[1].Delta != 300 || c.Metrics[1].TargetSpread != nil {
		t.Errorf("day against test: %+v", c)
	}

	// Nothing to compare: 404.
	for _, q := range []string{
		"&base=2026-11-09&target=2026-11-11",    // no result that day
		"&base=2026-11-10&target=tt_20261110_9", // no such test
		"&base=2026-11-10&target=" + other.ID,   // a test of another page
	} {
		e.do("GET", base+q, apitest.ViewerKey, nil).Want(t, 404).Problem(t)
	}
	e.do("GET", "/"+site.ID+"/pages/"+pages[0].ID+"/compare?device=desktop&base=2026-11-10&target=2026-11-11", apitest.ViewerKey, nil).Want(t, 404).Problem(t)
	e.do("GET", base+"&base=2026-11-10&target=2026-11-11", apitest.OtherKey, nil).Want(t, 404).Problem(t)

	// Bad input: 400 naming the parameters.
	e.do("GET", base+"&base=2026-13-10&target=yesterday", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "base", "target")
	e.do("GET", base+"&target=2026-11-11", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "base")
	e.do("GET", "/"+site.ID+"/pages/"+pages[0].ID+"/compare?device=tablet&base=2026-11-10&target=2026-11-11", apitest.ViewerKey, nil).Want(t, 400).Problem(t, "device")
}

// TestRegressionLinksComparison: a lab regression links to the comparison of its last good and
// first bad day, which answers; a regression of the user-experience data links to none.
func TestRegressionLinksComparison(t *testing.T) {
	e := newTestEnv(t)
	site, pages, w := e.createSite("example.com", "/")
	ctx := context.Background()
	home := storedPage(t, e, w, pages[0].ID)
	for day, lcp := range map[string]float64{"20261110": 1500, "20261111": 2100} {
		if err := e.store.PutLabResult(ctx, w, home, model.LabResult{Device: "mobile", Day: day, Runs: 1, Metrics: map[string]float64{"lcp": lcp}}); err != nil {
			t.Fatal(err)
		}
	}
	lab := model.Regression{Kind: model.KindRegression, Source: "lab", Page: home.ID, Device: "mobile", Metric: "lcp",
		LastGood: "20261110", FirstBad: "20261111", Status: model.RegressionOpen, Detected: time.Now()}
	lab.ID = model.RegressionID(w, "lab lcp", lab.FirstBad)
	ux := lab
	ux.Source, ux.ID = "ux", model.RegressionID(w, "ux lcp", lab.FirstBad)
	for _, r := range []model.Regression{lab, ux} {
		if _, err := e.store.PutRegression(ctx, w, r); err != nil {
			t.Fatal(err)
		}
	}
	type linked struct {
		ID         string `json:"id"`
		Comparison *struct {
			Page, Device, Base, Target, Path string
		} `json:"comparison"`
	}
	var got linked
	e.do("GET", "/"+site.ID+"/regressions/"+lab.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &got)
	c := got.Comparison
	if c == nil || c.Page != home.ID || c.Device != "mobile" || c.Base != "2026-11-10" || c.Target != "2026-11-11" {
		t.Fatalf("lab regression's comparison %+v", c)
	}
	var cmp comparisonOut
	e.do("GET", c.Path, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &cmp)
	if cmp.Base.Date != "2026-11-10" || cmp.Target.Date != "2026-11-11" || *cmp.Metrics[0].Delta != 600 {
		t.Errorf("the linked comparison %+v", cmp)
	}
	for _, r := range apitest.List[linked](t, e.do("GET", "/"+site.ID+"/regressions", apitest.ViewerKey, nil).Want(t, 200)) {
		if (r.ID == lab.ID) != (r.Comparison != nil) {
			t.Errorf("regression %s in the list: comparison %+v", r.ID, r.Comparison)
		}
	}
}

// TestCompareLoadsAPI: two days that kept their diagnostics compare their loads too: the
// filmstrips on one axis with the frames' image routes, the script added, the LCP element
// changed; a day without diagnostics compares its metrics only.
func TestCompareLoadsAPI(t *testing.T) {
	e := newTestEnv(t)
	site, pages, w := e.createSite("example.com", "/")
	ctx := context.Background()
	home := storedPage(t, e, w, pages[0].ID)
	put := func(day string, d *model.Diagnostics) {
		t.Helper()
		key := artifact.PageReportsPrefix(w.Account, w.ID, home.ID) + day + "-mobile.json.gz"
		if err := e.store.PutLabResult(ctx, w, home, model.LabResult{Device: "mobile", Day: day, Runs: 1, ReportKey: key,
			Metrics: map[string]float64{"lcp": float64(len(day))}}); err != nil {
			t.Fatal(err)
		}
		if d == nil {
			return
		}
		raw, _ := json.Marshal(d)
		e.putGzipped(artifact.DiagnosticsKey(key), raw)
	}
	lcp := func(v float64) *float64 { return &v }
	put("20261110", &model.Diagnostics{
		Filmstrip: []model.Frame{{Time: 300, Image: "aaaaaaaaaaaaaaaa.jpg"}, {Time: 900, Image: "bbbbbbbbbbbbbbbb.jpg"}},
		Marks:     model.Marks{FCP: lcp(300), LCP: lcp(900)},
		Requests:  []model.Request{{URL: "https://example.com/", End: 100, TransferSize: 5000, Type: "Document", Document: true}},
		LCP:       &model.LCP{Time: 900, Selector: "h1"},
		LongTasks: []model.LongTask{{URL: "https://example.com/app.js", Start: 200, Duration: 80}},
	})
	put("20261111", &model.Diagnostics{
		Filmstrip: []model.Frame{{Time: 300, Image: "aaaaaaaaaaaaaaaa.jpg"}, {Time: 1500, Image: "cccccccccccccccc.jpg"}},
		Marks:     model.Marks{FCP: lcp(300), LCP: lcp(1500)},
		Requests: []model.Request{{URL: "https://example.com/", End: 100, TransferSize: 5000, Type: "Document", Document: true},
			{URL: "https://cdn.example.com/big.js", Start: 100, End: 800, TransferSize: 300 << 10, Type: "Script", RenderBlocking: true, ThirdParty: true}},
		LCP: &model.LCP{Time: 1500, Selector: "img.hero"},
		LongTasks: []model.LongTask{{URL: "https://example.com/app.js", Start: 200, Duration: 90},
			{URL: "https://cdn.example.com/big.js", Start: 800, Duration: 240}, {URL: "https://cdn.example.com/big.js", Start: 1100, Duration: 60}},
	})
	put("20261112", nil)

	var c struct {
		Loads *struct {
			Filmstrip struct {
				Step  float64
				Slots []struct {
					Time         float64
					Base, Target *struct {
						Time float64
						URL  string
					}
				}
			}
			Requests []struct {
				Kind, URL      string
				RenderBlocking bool
				SizeChange     int64
			}
			UnchangedRequests int
			LCP               struct{ ElementChanged bool }
			LongTasks         struct {
				Base, Target struct {
					Count          int
					Total, Longest float64
				}
				Scripts []struct {
					URL          string
					Base, Target struct{ Count int }
					Change       float64
				}
			}
		}
	}
	path := "/" + site.ID + "/pages/" + home.ID + "/compare?device=mobile&base=2026-11-10&target=2026-11-11"
	e.do("GET", path, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &c)
	l := c.Loads
	if l == nil {
		t.Fatal("no loads compared")
	}
	if len(l.Requests) != 1 || l.Requests[0].Kind != "added" || l.Requests[0].URL != "https://cdn.example.com/big.js" || !l.Requests[0].RenderBlocking ||
		l.Requests[0].SizeChange != 300<<10 || l.UnchangedRequests != 1 || !l.LCP.ElementChanged {
		t.Errorf("loads %+v", l)
	}
	// The long tasks: in all, and the script whose tasks grew by 50 ms or more (app.js grew by 10).
	lt := l.LongTasks
	if lt.Base.Count != 1 || lt.Base.Total != 80 || lt.Target.Count != 3 || lt.Target.Total != 390 || lt.Target.Longest != 240 ||
		len(lt.Scripts) != 1 || lt.Scripts[0].URL != "https://cdn.example.com/big.js" || lt.Scripts[0].Change != 300 ||
		lt.Scripts[0].Base.Count != 0 || lt.Scripts[0].Target.Count != 2 {
		t.Errorf("long tasks %+v", lt)
	}
	f := l.Filmstrip
	if f.Step != 100 || len(f.Slots) != 16 || f.Slots[2].Base != nil || f.Slots[9].Base.Time != 900 || f.Slots[9].Target.Time != 300 || f.Slots[15].Target.Time != 1500 {
		t.Fatalf("filmstrip %+v", f)
	}
	img := f.Slots[15].Target.URL
	if !strings.HasPrefix(img, "/"+site.ID+"/pages/"+home.ID+"/diagnostics/images/cccccccccccccccc.jpg?") || !strings.Contains(img, "date=2026-11-11") {
		t.Errorf("the target's frame at 1.5 s: %q", img)
	}
	c.Loads = nil
	e.do("GET", strings.Replace(path, "2026-11-10", "2026-11-12", 1), apitest.ViewerKey, nil).Want(t, 200).Decode(t, &c)
	if c.Loads != nil {
		t.Errorf("a day without diagnostics compared loads: %+v", c.Loads)
	}
}
