package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

type regressionOut struct {
	ID            string  `json:"id"`
	Kind          string  `json:"kind"`
	Page          string  `json:"page"`
	Metric        string  `json:"metric"`
	Unit          string  `json:"unit"`
	FirstBadDay   string  `json:"firstBadDay"`
	ChangePercent float64 `json:"changePercent"`
	Status        string  `json:"status"`
	Acknowledged  *string `json:"acknowledgedAt"`
	Incident      string  `json:"incident"`
	Cause         struct {
		Changes []struct {
			Kind string `json:"kind"`
			URL  string `json:"url"`
		} `json:"changes"`
		Annotations []struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		} `json:"annotations"`
	} `json:"cause"`
}

type annotationOut struct {
	ID    string   `json:"id"`
	At    string   `json:"at"`
	Text  string   `json:"text"`
	Pages []string `json:"pages"`
}

// TestRegressionsAPI: the regressions the detector recorded are listed (filters, cursor),
// read with their cause and the annotations between their last good and first bad day, and
// acknowledged by an admin; thresholds are read and set; bad input is refused and changes
// nothing; another account sees none of it.
func TestRegressionsAPI(t *testing.T) {
	e := newTestEnv(t)
	site, pages, w := e.createSite("example.com", "/", "/shop")
	ctx := context.Background()
	lcp := model.Regression{Kind: model.KindRegression, Source: "lab", Page: pages[0].ID, Device: "mobile", Metric: "lcp",
		LastGood: "20261110", FirstBad: "20261111", Before: model.Level{Median: 1500, Spread: 40}, After: model.Level{Median: 2100, Spread: 60},
		Delta: 600, Percent: 40, P: 0.0001, Status: model.RegressionOpen, Detected: time.Now(),
		Cause: []model.CauseItem{{Kind: "lcp_resource", Title: "The LCP image grew", URL: "https://example.com/hero.jpg", Before: 100, After: 900, Unit: "KiB", Impact: 4080}}}
	lcp.ID = model.RegressionID(w, "lab/"+lcp.Page+"/mobile/lcp", lcp.FirstBad)
	cls := model.Regression{Kind: model.KindRegression, Source: "lab", Page: pages[1].ID, Device: "desktop", Metric: "cls",
		LastGood: "20261101", FirstBad: "20261102", Before: model.Level{Median: 0.01}, After: model.Level{Median: 0.2},
		Delta: 0.19, Percent: 1900, P: 0.0002, Status: model.RegressionRecovered, Recovered: "20261105", Detected: time.Now()}
	cls.ID = model.RegressionID(w, "lab/"+cls.Page+"/desktop/cls", cls.FirstBad)
	better := model.Regression{Kind: model.KindImprovement, Source: "lab", Page: pages[0].ID, Device: "desktop", Metric: "tbt",
		LastGood: "20261019", FirstBad: "20261020", Before: model.Level{Median: 400}, After: model.Level{Median: 100},
		Delta: -300, Percent: -75, P: 0.0001, Status: model.RegressionOpen, Detected: time.Now()}
	better.ID = model.RegressionID(w, "lab/"+better.Page+"/desktop/tbt", better.FirstBad)
	for _, r := range []model.Regression{lcp, cls, better} {
		if created, err := e.store.PutRegression(ctx, w, r); err != nil || !created {
			t.Fatalf("put %s: %v %v", r.ID, created, err)
		}
	}
	if created, err := e.store.PutRegression(ctx, w, lcp); err != nil || created {
		t.Fatalf("the same regression twice: created %v, %v", created, err)
	}

	// Annotations: a deploy the evening of the last good day is part of the LCP regression's
	// cause; one of the other page, or a week before, is not.
	base := "/" + site.ID
	var deploy annotationOut
	e.do("POST", base+"/annotations", apitest.AdminKey, map[string]any{"at": "2026-11-10T18:30:00Z", "text": "Deploy v2.3 (new hero)", "url": "https://ci.example.com/run/42"}).
		Want(t, 201).Decode(t, &deploy)
	e.do("POST", base+"/annotations", apitest.AdminKey, map[string]any{"at": "2026-11-11T09:00:00Z", "text": "Shop fix", "pages": []string{pages[1].ID}}).Want(t, 201)
	e.do("POST", base+"/annotations", apitest.AdminKey, map[string]any{"at": "2026-11-03T09:00:00Z", "text": "Old deploy"}).Want(t, 201)
	for _, tc := range []struct {
		name   string
		body   any
		status int
		fields []string
	}{
		{"no text", map[string]any{"at": "2026-11-10T18:30:00Z"}, 422, []string{"text"}},
		{"bad url", map[string]any{"text": "x", "url": "ftp://x"}, 422, []string{"url"}},
		{"unknown page", map[string]any{"text": "x", "pages": []string{"nope"}}, 400, []string{"pages"}},
		{"page ID longer than any key", map[string]any{"text": "x", "pages": []string{strings.Repeat("p", 1100)}}, 400, []string{"pages"}},
		{"future", map[string]any{"text": "x", "at": "2099-01-01T00:00:00Z"}, 422, []string{"at"}},
		{"unknown field", map[string]any{"text": "x", "when": "now"}, 400, nil},
	} {
		t.Run("annotation "+tc.name, func(t *testing.T) {
			e.do("POST", base+"/annotations", apitest.AdminKey, tc.body).Want(t, tc.status).Problem(t, tc.fields...)
		})
	}
	e.do("POST", base+"/annotations", apitest.ViewerKey, map[string]any{"text": "x"}).Want(t, 403)
	anns := apitest.List[annotationOut](t, e.do("GET", base+"/annotations", apitest.ViewerKey, nil).Want(t, 200))
	if len(anns) != 3 || anns[0].Text != "Shop fix" || anns[2].Text != "Old deploy" {
		t.Fatalf("annotations %+v, want 3 newest first (nothing refused stored)", anns)
	}
	if anns := apitest.List[annotationOut](t, e.do("GET", base+"/annotations?date=20261110-20261110", apitest.ViewerKey, nil).Want(t, 200)); len(anns) != 1 || anns[0].ID != deploy.ID {
		t.Fatalf("annotations of 2026-11-10: %+v", anns)
	}

	all := apitest.List[regressionOut](t, e.do("GET", base+"/regressions", apitest.ViewerKey, nil).Want(t, 200))
	if len(all) != 3 || all[0].ID != lcp.ID || all[1].ID != cls.ID || all[2].ID != better.ID {
		t.Fatalf("regressions %+v, want newest first by first bad day", all)
	}
	got := all[0]
	if got.Unit != "ms" || got.FirstBadDay != "2026-11-11" || len(got.Cause.Changes) != 1 || got.Cause.Changes[0].Kind != "lcp_resource" ||
		len(got.Cause.Annotations) != 1 || got.Cause.Annotations[0].ID != deploy.ID {
		t.Fatalf("LCP regression %+v, want its cause with the deploy annotation only", got)
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"status=open", []string{lcp.ID, better.ID}},
		{"status=recovered", []string{cls.ID}},
		{"kind=improvement", []string{better.ID}},
		{"metric=cls", []string{cls.ID}},
		{"page=" + pages[0].ID + "&device=mobile", []string{lcp.ID}},
		{"date=20261101-20261110", []string{cls.ID}},
		{"status=open&kind=regression", []string{lcp.ID}},
		{"source=lab&metric=tbt", []string{better.ID}},
		{"source=rum", nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			list := apitest.List[regressionOut](t, e.do("GET", base+"/regressions?"+tc.query, apitest.ViewerKey, nil).Want(t, 200))
			var ids []string
			for _, r := range list {
				ids = append(ids, r.ID)
			}
			if len(ids) != len(tc.want) || (len(ids) > 0 && ids[0] != tc.want[0]) || (len(ids) > 1 && ids[1] != tc.want[1]) {
				t.Fatalf("got %v, want %v", ids, tc.want)
			}
		})
	}
	for _, q := range []string{"status=closed", "metric=fid", "kind=x", "device=tv", "source=crux", "date=2026", "limit=0"} {
		e.do("GET", base+"/regressions?"+q, apitest.ViewerKey, nil).Want(t, 400).Problem(t)
	}
	// Cursor pagination visits each once.
	var seen []string
	var page struct {
		Result struct {
			List   []regressionOut `json:"list"`
			Cursor string          `json:"cursor"`
		} `json:"result"`
	}
	e.do("GET", base+"/regressions?limit=2", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &page)
	for _, r := range page.Result.List {
		seen = append(seen, r.ID)
	}
	if page.Result.Cursor == "" {
		t.Fatal("no cursor after 2 of 3")
	}
	cursor := page.Result.Cursor
	page.Result.Cursor = ""
	e.do("GET", base+"/regressions?limit=2&cursor="+cursor, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &page)
	for _, r := range page.Result.List {
		seen = append(seen, r.ID)
	}
	if len(seen) != 3 || seen[2] != better.ID || page.Result.Cursor != "" {
		t.Fatalf("pages saw %v (cursor %q)", seen, page.Result.Cursor)
	}

	// Acknowledging: admin only, status acknowledged only; a recovered one stays recovered.
	e.do("PUT", base+"/regressions/"+lcp.ID, apitest.ViewerKey, map[string]any{"status": "acknowledged"}).Want(t, 403)
	e.do("PUT", base+"/regressions/"+lcp.ID, apitest.AdminKey, map[string]any{"status": "recovered"}).Want(t, 400).Problem(t, "status")
	e.do("PUT", base+"/regressions/rg_nope", apitest.AdminKey, map[string]any{"status": "acknowledged"}).Want(t, 404)
	var acked regressionOut
	e.do("PUT", base+"/regressions/"+lcp.ID, apitest.AdminKey, map[string]any{"status": "acknowledged"}).Want(t, 200).Decode(t, &acked)
	if acked.Status != "acknowledged" || acked.Acknowledged == nil {
		t.Fatalf("acknowledged %+v", acked)
	}
	e.do("PUT", base+"/regressions/"+cls.ID, apitest.AdminKey, map[string]any{"status": "acknowledged"}).Want(t, 200).Decode(t, &acked)
	if acked.Status != "recovered" || acked.Acknowledged == nil {
		t.Fatalf("a recovered regression acknowledged: %+v", acked)
	}
	e.do("GET", base+"/regressions/"+lcp.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &got)
	if got.Status != "acknowledged" {
		t.Fatalf("read back %+v", got)
	}

	// Thresholds: defaults, the website's own, refused input changes nothing.
	var th map[string]struct {
		Relative float64 `json:"relative"`
		Absolute float64 `json:"absolute"`
		Custom   bool    `json:"custom"`
	}
	e.do("GET", base+"/regression-thresholds", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &th)
	if th["lcp"].Relative != 0.1 || th["lcp"].Absolute != 100 || th["cls"].Absolute != 0.05 || th["performance_score"].Absolute != 5 || th["lcp"].Custom {
		t.Fatalf("default thresholds %+v", th)
	}
	e.do("PUT", base+"/regression-thresholds", apitest.ViewerKey, map[string]any{"lcp": map[string]float64{"relative": 0.2}}).Want(t, 403)
	e.do("PUT", base+"/regression-thresholds", apitest.AdminKey, map[string]any{"lcp": map[string]float64{"relative": 0.2, "absolute": 250}}).Want(t, 200).Decode(t, &th)
	if th["lcp"].Relative != 0.2 || th["lcp"].Absolute != 250 || !th["lcp"].Custom || th["fcp"].Custom {
		t.Fatalf("thresholds after put %+v", th)
	}
	for _, bad := range []struct {
		body   any
		status int
		field  string
	}{
		{map[string]any{"fid": map[string]float64{"absolute": 1}}, 400, "fid"},
		{map[string]any{"lcp": map[string]float64{}}, 422, "lcp"},
		{map[string]any{"lcp": map[string]float64{"relative": -1}}, 422, "lcp.relative"},
		{map[string]any{"lcp": map[string]any{"relative": 0.1, "x": 1}}, 400, "lcp.x"},
		{map[string]any{"lcp": map[string]any{"relative": "0.1"}}, 400, "lcp.relative"},
	} {
		e.do("PUT", base+"/regression-thresholds", apitest.AdminKey, bad.body).Want(t, bad.status).Problem(t, bad.field)
	}
	e.do("GET", base+"/regression-thresholds", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &th)
	if th["lcp"].Absolute != 250 {
		t.Fatalf("a refused put changed the thresholds: %+v", th)
	}

	// Another account sees nothing of it.
	for _, path := range []string{"/regressions", "/regressions/" + lcp.ID, "/annotations", "/regression-thresholds"} {
		e.do("GET", base+path, apitest.OtherKey, nil).Want(t, 404)
	}
	e.do("PUT", base+"/regressions/"+lcp.ID, apitest.OtherKey, map[string]any{"status": "acknowledged"}).Want(t, 404)
	e.do("POST", base+"/annotations", apitest.OtherKey, map[string]any{"text": "x"}).Want(t, 404)
}
