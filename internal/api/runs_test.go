package api_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

type runRecord struct {
	ID         string
	Created    time.Time
	Device     string
	Status     string
	Duration   *int
	INP        *int
	CLS        *float64
	Error      string
	FailedStep *int
}

func TestRunsAndStatistics(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	base := "/" + site.ID + "/multistep"
	var a, b multistepTest
	e.do("POST", base, apitest.AdminKey, `{"alias":"A","device":"desktop","steps":[{"type":"navigate","target":"/"}]}`).Want(t, 201).Decode(t, &a)
	e.do("POST", base, apitest.AdminKey, `{"alias":"B","device":"mobile","steps":[{"type":"navigate","target":"/b"}]}`).Want(t, 201).Decode(t, &b)

	// Run one now: recorded as queued, with a message carrying it.
	var started struct{ RunID string }
	e.do("POST", base+"/"+a.ID+"/runs", apitest.ViewerKey, nil).Want(t, 201).Decode(t, &started)
	runs := apitest.List[runRecord](t, e.do("GET", base+"/"+a.ID+"/runs", apitest.ViewerKey, nil).Want(t, 200))
	if started.RunID == "" || len(runs) != 1 || runs[0].ID != started.RunID || runs[0].Status != "queued" || runs[0].Device != "desktop" || runs[0].Duration != nil {
		t.Fatalf("after a run started: %+v (run %q)", runs, started.RunID)
	}

	// Run all: one run per test.
	var all struct {
		Message string
		Queued  int
	}
	e.do("POST", base+"/run-all", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &all)
	if all.Queued != 2 || all.Message == "" {
		t.Errorf("run-all answered %+v", all)
	}
	msgs := awstest.Receive(t, e.runs, 3)
	if len(msgs) != 3 {
		t.Fatalf("%d run messages, want 3", len(msgs))
	}
	perTest := map[string]int{}
	for _, m := range msgs {
		var j multistep.Job
		if err := json.Unmarshal([]byte(m), &j); err != nil {
			t.Fatal(err)
		}
		perTest[j.Test]++
	}
	if perTest[a.ID] != 2 || perTest[b.ID] != 1 {
		t.Errorf("messages per test %v", perTest)
	}

	// Record outcomes as the worker does; the list averages completed runs and derives state.
	ctx := context.Background()
	w, _ := e.store.Website(ctx, "acme", site.ID)
	aRuns, err := e.store.Runs(ctx, w, a.ID, time.Time{}, 0)
	if err != nil || len(aRuns) != 2 {
		t.Fatalf("runs of A: %v, %v", aRuns, err)
	}
	for i, r := range aRuns {
		d, inp, tbt, cls, cpu, bytes := float64(4000+1000*i), float64(200+100*i), 150.0, 0.05, 800.0, int64(123456)
		r.Status, r.Duration, r.INP, r.TBT, r.CLS, r.CPUTotal, r.BytesTotal = model.RunCompleted, &d, &inp, &tbt, &cls, &cpu, &bytes
		if err := e.store.UpdateRun(ctx, w, r); err != nil {
			t.Fatal(err)
		}
	}
	bRuns, _ := e.store.Runs(ctx, w, b.ID, time.Time{}, 0)
	step := 2
	bRuns[0].Status, bRuns[0].Error, bRuns[0].FailedStep = model.RunFailed, "step 2: no element matches #buy", &step
	if err := e.store.UpdateRun(ctx, w, bRuns[0]); err != nil {
		t.Fatal(err)
	}

	runs = apitest.List[runRecord](t, e.do("GET", base+"/"+a.ID+"/runs", apitest.ViewerKey, nil))
	if len(runs) != 2 || !runs[0].Created.After(runs[1].Created) || runs[0].Status != "completed" || *runs[0].INP != 200 {
		t.Errorf("runs of A, newest first: %+v", runs)
	}
	runs = apitest.List[runRecord](t, e.do("GET", base+"/"+b.ID+"/runs", apitest.ViewerKey, nil))
	if runs[0].Status != "failed" || runs[0].FailedStep == nil || *runs[0].FailedStep != 2 || runs[0].Error == "" {
		t.Errorf("failed run of B: %+v", runs[0])
	}

	var list struct {
		Result struct {
			List []struct {
				ID           string
				INP, TBT     *int
				CLS          *float64
				Duration     *int
				SuccessRates []struct {
					Date string
					Rate int
				} `json:"success_rates"`
				SuccessRate *int `json:"success_rate"`
				State       string
			}
		}
	}
	e.do("GET", base, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &list)
	for _, item := range list.Result.List {
		switch item.ID {
		case a.ID:
			if item.State != "up" || *item.INP != 250 || *item.Duration != 4500 || *item.CLS != 0.05 || *item.SuccessRate != 100 ||
				len(item.SuccessRates) != 1 || item.SuccessRates[0].Rate != 100 || item.SuccessRates[0].Date != time.Now().UTC().Format("2006-01-02") {
				t.Errorf("test A statistics %+v", item)
			}
		case b.ID:
			if item.State != "down" || item.INP != nil || *item.SuccessRate != 0 {
				t.Errorf("test B statistics %+v", item)
			}
		}
	}

	e.do("POST", base+"/nosuchtest/runs", apitest.ViewerKey, nil).Want(t, 404)
	e.do("GET", base+"/nosuchtest/runs", apitest.ViewerKey, nil).Want(t, 404)
	e.do("POST", base+"/run-all", apitest.OtherKey, nil).Want(t, 404)
	e.do("POST", base+"/"+a.ID+"/runs", apitest.OtherKey, nil).Want(t, 404)
	e.do("POST", base+"/run-all", "", nil).Want(t, 401)
}

// A run through a single-page app lists each route a step changed to with its vitals, and
// where the route's real users are: its pages report row, the monitored page of the same URL
// and the page group its pattern matches (a route off the website's domain has none).
func TestRunSoftNavigations(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("shop.example")
	pages := e.createPages(site.ID, "/product/123")
	e.do("PUT", "/"+site.ID+"/field-testing/settings", apitest.AdminKey, `{"groups":[{"name":"product pages","pattern":"/product/*"}]}`).Want(t, 200)
	base := "/" + site.ID + "/multistep"
	var test multistepTest
	e.do("POST", base, apitest.AdminKey, `{"alias":"A","device":"desktop","steps":[{"type":"navigate","target":"/"},{"type":"click","target":"#to-product"}]}`).Want(t, 201).Decode(t, &test)
	e.do("POST", base+"/"+test.ID+"/runs", apitest.ViewerKey, nil).Want(t, 201)

	ctx := context.Background()
	w, _ := e.store.Website(ctx, "acme", site.ID)
	runs, err := e.store.Runs(ctx, w, test.ID, time.Time{}, 0)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v, %v", runs, err)
	}
	r := runs[0]
	d, inp, tbt, cls, cpu, bytes := 3000.0, 160.0, 100.0, 0.0, 700.0, int64(20000)
	r.Status, r.Duration, r.INP, r.TBT, r.CLS, r.CPUTotal, r.BytesTotal = model.RunCompleted, &d, &inp, &tbt, &cls, &cpu, &bytes
	lcp, routeINP := 24.6, 159.6
	r.SoftNavigations = []model.SoftNavigation{
		{Step: 1, URL: "https://shop.example/product/123?ref=nav", LCP: &lcp, LCPElement: "#lcp-product", CLS: 0.01624, INP: &routeINP, INPTarget: "#work-product"},
		{Step: 2, URL: "https://other.example/elsewhere"},
	}
	if err := e.store.UpdateRun(ctx, w, r); err != nil {
		t.Fatal(err)
	}
	type route struct {
		Step       int     `json:"step"`
		URL        string  `json:"url"`
		LCP        *int    `json:"lcp"`
		LCPElement string  `json:"lcpElement"`
		CLS        float64 `json:"cls"`
		INP        *int    `json:"inp"`
		INPTarget  string  `json:"inpTarget"`
		Field      *struct {
			Path  string   `json:"path"`
			Pages []string `json:"pages"`
			Group string   `json:"group"`
		} `json:"field"`
	}
	got := apitest.List[struct {
		SoftNavigations []route `json:"softNavigations"`
	}](t, e.do("GET", base+"/"+test.ID+"/runs", apitest.ViewerKey, nil).Want(t, 200))
	if len(got) != 1 || len(got[0].SoftNavigations) != 2 {
		t.Fatalf("runs: %+v, want one with two soft navigations", got)
	}
	p, off := got[0].SoftNavigations[0], got[0].SoftNavigations[1]
	if p.Step != 1 || p.LCP == nil || *p.LCP != 25 || p.LCPElement != "#lcp-product" || p.CLS != 0.0162 || p.INP == nil || *p.INP != 160 || p.INPTarget != "#work-product" {
		t.Errorf("the product route: %+v", p)
	}
	if p.Field == nil || p.Field.Path != "/product/123" || len(p.Field.Pages) != 1 || p.Field.Pages[0] != pages[0].ID || p.Field.Group != "product pages" {
		t.Errorf("the product route's field: %+v, want /product/123, page %s, group product pages", p.Field, pages[0].ID)
	}
	if off.Field != nil || off.LCP != nil || off.INP != nil {
		t.Errorf("the route off the domain: %+v, want no field and no LCP or INP", off)
	}
}
