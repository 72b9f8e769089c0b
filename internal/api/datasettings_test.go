package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/model"
)

// TestExportOnDemand: an admin writes a day's export; the Parquet file read back with the
// library holds the values the API answers for that day (the timeline's), and a viewer, a bad
// day or another account's website writes nothing.
func TestExportOnDemand(t *testing.T) {
	ctx := context.Background()
	e := newTestEnv(t)
	w := e.createWebsite("example.com")
	pages := e.createPages(w.ID, "/", "/pricing")
	site, err := e.store.Website(ctx, "acme", w.ID)
	if err != nil {
		t.Fatal(err)
	}
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

	e.do("POST", "/"+w.ID+"/exports", viewerKey, map[string]string{}).want(t, 403)
	e.do("POST", "/"+w.ID+"/exports", otherKey, map[string]string{}).want(t, 404)
	e.do("POST", "/"+w.ID+"/exports", adminKey, map[string]string{"day": "2026-02-30"}).want(t, 422)
	e.do("POST", "/"+w.ID+"/exports", adminKey, map[string]string{"day": time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)}).want(t, 422)
	if keys, err := e.exports.Keys(ctx, ""); err != nil || len(keys) != 0 {
		t.Fatalf("refused exports wrote %v (%v)", keys, err)
	}

	var res struct {
		Day  string
		Rows map[string]int
		Keys []string
	}
	e.do("POST", "/"+w.ID+"/exports", adminKey, map[string]string{}).want(t, 200).decode(t, &res)
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
		e.do("GET", "/"+w.ID+"/pages/"+p.ID+"/timeline?device=mobile&date="+day+"-"+day, viewerKey, nil).want(t, 200).decode(t, &timeline)
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
	e.do("GET", "/"+w.ID+"/data-settings", viewerKey, nil).want(t, 200).decode(t, &got)
	if got.Exports || got.Effective != (model.Retention{Reports: 90, Series: 90, RUM: 400, Events: 90, Exports: 731}) || got.Limits["reports"].Min != 31 {
		t.Fatalf("defaults %+v", got)
	}
	e.do("PUT", "/"+w.ID+"/data-settings", viewerKey, map[string]any{"exports": true}).want(t, 403)
	e.do("PUT", "/"+w.ID+"/data-settings", adminKey, map[string]any{"exports": true, "retention": map[string]int{"reports": 30, "exports": 800}}).
		want(t, 422).problem(t, "retention.reports", "retention.exports")
	e.do("GET", "/"+w.ID+"/data-settings", viewerKey, nil).want(t, 200).decode(t, &got)
	if got.Exports || got.Retention != (model.Retention{}) {
		t.Fatalf("a refused change changed %+v", got)
	}
	e.do("PUT", "/"+w.ID+"/data-settings", adminKey, map[string]any{"exports": true, "retention": map[string]int{"reports": 31, "events": 7}}).want(t, 200).decode(t, &got)
	if !got.Exports || got.Effective.Reports != 31 || got.Effective.Events != 7 || got.Effective.Exports != 731 {
		t.Fatalf("after the change %+v", got)
	}
}
