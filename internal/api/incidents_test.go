package api_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

type incidentOut struct {
	ID          string          `json:"id"`
	Kind        string          `json:"kind"`
	State       string          `json:"state"`
	Page        string          `json:"page"`
	Metrics     []string        `json:"metrics"`
	Devices     []string        `json:"devices"`
	Sources     []string        `json:"sources"`
	FirstBadDay string          `json:"firstBadDay"`
	ResolvedDay string          `json:"resolvedDay"`
	Regressions []regressionOut `json:"regressions"`
	Cause       struct {
		Changes []struct {
			Kind string `json:"kind"`
		} `json:"changes"`
		Annotations []struct {
			ID string `json:"id"`
		} `json:"annotations"`
	} `json:"cause"`
	Chart struct {
		Metric string `json:"metric"`
		Device string `json:"device"`
		Points []struct {
			Day   string  `json:"day"`
			Value float64 `json:"value"`
		} `json:"points"`
	} `json:"chart"`
	Compare *struct {
		Page, Device, Base, Target string
	} `json:"compare"`
	Acknowledged *string `json:"acknowledgedAt"`
}

// TestIncidentsAPI: one change of a page on two metrics and both devices (and its
// user-experience p75 the next day) is one incident, stored before incidents existed or not;
// an improvement of the same day is another, never open; a recovered change is resolved.
// Incidents are listed (filters, cursor), read, and acknowledged in bulk by an admin; bad
// input is refused and changes nothing; another account sees none of it.
func TestIncidentsAPI(t *testing.T) {
	e := newTestEnv(t)
	site, pages, w := e.createSite("example.com", "/", "/shop")
	ctx := context.Background()
	home, shop := pages[0].ID, pages[1].ID
	reg := func(kind, source, page, device, metric, firstBad, incident string, percent float64) model.Regression {
		r := model.Regression{Kind: kind, Source: source, Page: page, Device: device, Metric: metric,
			LastGood: dayBefore(t, firstBad), FirstBad: firstBad, Before: model.Level{Median: 1000}, After: model.Level{Median: 1000 * (1 + percent/100)},
			Delta: 10 * percent, Percent: percent, P: 0.0001, Status: model.RegressionOpen, Detected: time.Now(), Incident: incident}
		r.ID = model.RegressionID(w, source+page+device+metric, firstBad)
		return r
	}
	change := model.IncidentID(w, "page:"+home, model.KindRegression, "20261111")
	lcpMobile := reg(model.KindRegression, "lab", home, "mobile", "lcp", "20261111", change, 40)
	lcpMobile.Days = []model.DayValue{{Day: "20261110", Value: 1000}, {Day: "20261111", Value: 1400}, {Day: "20261112", Value: 1410}}
	lcpMobile.Cause = []model.CauseItem{{Kind: "resource_added", Title: "A new script", URL: "https://example.com/a.js", After: 300, Unit: "KiB", Impact: 300}}
	members := []model.Regression{
		lcpMobile,
		reg(model.KindRegression, "lab", home, "desktop", "lcp", "20261111", change, 25),
		// Stored before incidents: grouped when read.
		reg(model.KindRegression, "lab", home, "mobile", "tbt", "20261111", "", 80),
		reg(model.KindRegression, "lab", home, "desktop", "tbt", "20261111", "", 60),
		reg(model.KindRegression, "ux", home, "mobile", "lcp", "20261112", "", 20),
	}
	better := reg(model.KindImprovement, "lab", home, "mobile", "cls", "20261111", "", -50)
	fixed := reg(model.KindRegression, "lab", shop, "desktop", "cls", "20261105", "", 300)
	fixed.Status, fixed.Recovered = model.RegressionRecovered, "20261109"
	for _, r := range append(members, better, fixed) {
		if _, err := e.store.PutRegression(ctx, w, r); err != nil {
			t.Fatal(err)
		}
	}
	base := "/" + site.ID
	all := apitest.List[incidentOut](t, e.do("GET", base+"/incidents", apitest.ViewerKey, nil).Want(t, 200))
	if len(all) != 3 {
		t.Fatalf("incidents %+v, want the change, the improvement and the fixed one", all)
	}
	var got incidentOut
	for _, in := range all {
		if in.Kind == model.KindRegression && in.Page == home {
			got = in
		}
	}
	if got.ID != change || got.State != "open" || len(got.Regressions) != len(members) || !slices.Equal(got.Metrics, []string{"lcp", "tbt"}) ||
		!slices.Equal(got.Devices, []string{"desktop", "mobile"}) || !slices.Equal(got.Sources, []string{"lab", "ux"}) || got.FirstBadDay != "2026-11-11" {
		t.Fatalf("the change %+v, want one open incident of its 5 regressions", got)
	}
	for _, r := range got.Regressions {
		if r.Incident != change {
			t.Fatalf("regression %+v does not name its incident", r)
		}
	}
	// The lead is the largest lab change (tbt on mobile): the chart and the comparison are its.
	if got.Chart.Metric != "tbt" || got.Chart.Device != "mobile" || got.Compare == nil || got.Compare.Page != home ||
		got.Compare.Device != "mobile" || got.Compare.Base != "2026-11-10" || got.Compare.Target != "2026-11-11" {
		t.Fatalf("chart %+v and comparison %+v, want the mobile tbt change's", got.Chart, got.Compare)
	}
	if len(got.Cause.Changes) != 1 || got.Cause.Changes[0].Kind != "resource_added" {
		t.Fatalf("cause %+v, want its members' changes", got.Cause)
	}
	var one incidentOut
	e.do("GET", base+"/incidents/"+change, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &one)
	if one.ID != change || len(one.Regressions) != len(members) {
		t.Fatalf("read %+v", one)
	}
	var r regressionOut
	e.do("GET", base+"/regressions/"+members[2].ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &r)
	if r.Incident != change {
		t.Fatalf("a regression stored before incidents names %q, want %q", r.Incident, change)
	}
	for _, tc := range []struct {
		query string
		want  []string // states
	}{
		{"state=open", []string{"open"}},
		{"state=resolved", []string{"resolved", "resolved"}},
		{"kind=improvement", []string{"resolved"}},
		{"page=" + shop, []string{"resolved"}},
		{"date=20261101-20261110", []string{"resolved"}},
		{"state=acknowledged", nil},
	} {
		t.Run(tc.query, func(t *testing.T) {
			var states []string
			for _, in := range apitest.List[incidentOut](t, e.do("GET", base+"/incidents?"+tc.query, apitest.ViewerKey, nil).Want(t, 200)) {
				states = append(states, in.State)
			}
			if !slices.Equal(states, tc.want) {
				t.Fatalf("states %v, want %v", states, tc.want)
			}
		})
	}
	for _, q := range []string{"state=closed", "kind=x", "date=2026", "limit=0", "cursor=abc"} {
		e.do("GET", base+"/incidents?"+q, apitest.ViewerKey, nil).Want(t, 400).Problem(t)
	}
	// Cursor pagination visits each once, newest first.
	var seen []string
	cursor := ""
	for range 3 {
		var page struct {
			Result struct {
				List   []incidentOut `json:"list"`
				Cursor string        `json:"cursor"`
			} `json:"result"`
		}
		q := "?limit=2"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		e.do("GET", base+"/incidents"+q, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &page)
		for _, in := range page.Result.List {
			seen = append(seen, in.FirstBadDay)
		}
		if cursor = page.Result.Cursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(seen, []string{"2026-11-11", "2026-11-11", "2026-11-05"}) {
		t.Fatalf("pages saw %v", seen)
	}

	// Acknowledging in bulk: admins only; an unknown ID acknowledges nothing.
	ids := []string{change, all[2].ID}
	for _, tc := range []struct {
		name   string
		key    string
		body   any
		status int
		fields []string
	}{
		{"viewer", apitest.ViewerKey, map[string]any{"ids": ids}, 403, nil},
		{"no ids", apitest.AdminKey, map[string]any{"ids": []string{}}, 400, []string{"ids"}},
		{"missing", apitest.AdminKey, map[string]any{}, 400, []string{"ids"}},
		{"unknown field", apitest.AdminKey, map[string]any{"ids": ids, "all": true}, 400, nil},
		{"unknown incident", apitest.AdminKey, map[string]any{"ids": []string{change, "in_nope"}}, 404, nil},
		{"another account", apitest.OtherKey, map[string]any{"ids": ids}, 404, nil},
	} {
		t.Run("acknowledge "+tc.name, func(t *testing.T) {
			res := e.do("POST", base+"/incidents/acknowledge", tc.key, tc.body).Want(t, tc.status)
			if tc.status == 400 {
				res.Problem(t, tc.fields...)
			}
			var now incidentOut
			e.do("GET", base+"/incidents/"+change, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &now)
			if now.State != "open" || now.Acknowledged != nil {
				t.Fatalf("refused, yet %+v", now)
			}
		})
	}
	acked := apitest.List[incidentOut](t, e.do("POST", base+"/incidents/acknowledge", apitest.AdminKey, map[string]any{"ids": ids}).Want(t, 200))
	if len(acked) != 2 || acked[0].ID != change || acked[0].State != "acknowledged" || acked[0].Acknowledged == nil {
		t.Fatalf("acknowledged %+v", acked)
	}
	for _, r := range acked[0].Regressions {
		if r.Status != "acknowledged" {
			t.Fatalf("member %+v not acknowledged", r)
		}
	}
	if len(apitest.List[incidentOut](t, e.do("GET", base+"/incidents?state=open", apitest.ViewerKey, nil).Want(t, 200))) != 0 {
		t.Fatal("an incident still open after its bulk acknowledgement")
	}
	// Acknowledging again changes nothing.
	again := apitest.List[incidentOut](t, e.do("POST", base+"/incidents/acknowledge", apitest.AdminKey, map[string]any{"ids": []string{change}}).Want(t, 200))
	if len(again) != 1 || *again[0].Acknowledged != *acked[0].Acknowledged {
		t.Fatalf("acknowledged twice: %+v", again)
	}

	// Another account sees nothing of it.
	for _, path := range []string{"/incidents", "/incidents/" + change} {
		e.do("GET", base+path, apitest.OtherKey, nil).Want(t, 404)
	}
	e.do("GET", base+"/incidents/in_nope", apitest.ViewerKey, nil).Want(t, 404)
}

func dayBefore(t *testing.T, day string) string {
	d, err := time.Parse(model.DayLayout, day)
	if err != nil {
		t.Fatal(err)
	}
	return model.Day(d.AddDate(0, 0, -1))
}

// TestIncidentFieldVerdict: an incident shows its field verdict once decided, with its
// numbers, and null before; another incident's verdict is not shown on it.
func TestIncidentFieldVerdict(t *testing.T) {
	e := newTestEnv(t)
	site, pages, w := e.createSite("example.com", "/", "/shop")
	ctx := context.Background()
	var ids []string
	for i, p := range pages {
		r := model.Regression{ID: model.RegressionID(w, "lab"+p.ID, "20261110"), Kind: model.KindRegression, Source: "lab", Page: p.ID, Device: "mobile",
			Metric: "lcp", LastGood: "20261109", FirstBad: "20261110", Before: model.Level{Median: 2000}, After: model.Level{Median: 2600 + float64(i)},
			Percent: 30, Status: model.RegressionOpen, Detected: time.Now()}
		r.Incident = model.IncidentID(w, r.Subject(), r.Kind, r.FirstBad)
		if _, err := e.store.PutRegression(ctx, w, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Incident)
	}
	v := model.Verdict{Incident: ids[0], Page: pages[0].ID, Device: "mobile", Verdict: model.VerdictNotSeen, Day: "20261117",
		Decided: time.Date(2026, 11, 17, 4, 0, 0, 0, time.UTC), Summary: "Not seen in the field: real users' p75 LCP 2100 ms → 2120 ms, +1 %; noise 210 ms.",
		Checks: []model.VerdictCheck{{Source: "rum", Metric: "lcp", From: "20261103", To: "20261116", Before: 2100, After: 2120, Noise: 210, DaysBefore: 7, DaysAfter: 7, Enough: true}}}
	if _, created, err := e.store.PutVerdict(ctx, w, "20261110", v); err != nil || !created {
		t.Fatal(created, err)
	}
	if _, created, err := e.store.PutVerdict(ctx, w, "20261110", model.Verdict{Incident: ids[0], Verdict: model.VerdictConfirmed}); err != nil || created {
		t.Fatalf("a second verdict was stored: %v %v", created, err)
	}
	type verdictOut struct {
		Verdict, Summary, DecidedAt string
		Checks                      []struct {
			Source, Metric, From, To string
			Before, After, Noise     float64
			DaysBefore, DaysAfter    int
			Enough, Moved            bool
		}
	}
	var one struct{ FieldVerdict *verdictOut }
	e.do("GET", "/"+site.ID+"/incidents/"+ids[0], apitest.ViewerKey, nil).Want(t, 200).Decode(t, &one)
	got := one.FieldVerdict
	if got == nil || got.Verdict != model.VerdictNotSeen || got.Summary != v.Summary || got.DecidedAt != "2026-11-17T04:00:00Z" || len(got.Checks) != 1 ||
		got.Checks[0].From != "2026-11-03" || got.Checks[0].After != 2120 || got.Checks[0].DaysAfter != 7 || !got.Checks[0].Enough || got.Checks[0].Moved {
		t.Errorf("fieldVerdict %+v", got)
	}
	var other struct{ FieldVerdict *verdictOut }
	e.do("GET", "/"+site.ID+"/incidents/"+ids[1], apitest.ViewerKey, nil).Want(t, 200).Decode(t, &other)
	if other.FieldVerdict != nil {
		t.Errorf("the other incident shows %+v", other.FieldVerdict)
	}
}
