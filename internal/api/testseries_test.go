package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

type seriesTest struct {
	ID     string
	Page   page
	Device string
	Status string
	Error  *string
	Report *string
	Method string
	LCP    *float64 `json:"lcp"`
	CLS    *float64 `json:"cls"`
	Score  *float64 `json:"performance_score"`
	Over   *int     `json:"budgets_exceeded"`
	Risk   *int     `json:"budgets_at_risk"`
}

type testSeries struct {
	ID, SeriesID, Website, Status, Description, Initiator string
	Count                                                 int
	Failed                                                int `json:"failed_tests"`
	Result                                                *struct{ List []seriesTest }
}

// TestTestSeries: any key of the account starts a series (the clients' own fields ignored,
// anything else refused), one audit message per test names its test, the description becomes
// an annotation; a test's outcome shows in the series with the pages list's formats and the
// budgets; its report is served; another account sees none of it; the on-demand audit limit
// holds.
func TestTestSeries(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	ps := e.createPages(site.ID, "/", "/pricing")
	w := "/" + site.ID
	e.do("POST", w+"/budgets", apitest.AdminKey, `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`).Want(t, 201)
	e.do("POST", w+"/budgets", apitest.AdminKey, `{"metric":"cls","operator":"lt","value":0.1,"device":"mobile"}`).Want(t, 201)

	var s testSeries
	e.do("POST", w+"/testseries", apitest.ViewerKey, `{"pages":[{"page_id":"`+ps[0].ID+`","device":"mobile"},{"page_id":"`+ps[0].ID+`","device":"mobile"}],
		"description":"Deploy v1.2.3","initiator":"CLI","website":"`+site.ID+`","page":null,"output":"json"}`).Want(t, 201).Decode(t, &s)
	if s.ID == "" || s.SeriesID != s.ID || s.Website != site.ID || s.Status != "queued" || s.Count != 1 || s.Description != "Deploy v1.2.3" ||
		s.Initiator != "CLI" || s.Result == nil || len(s.Result.List) != 1 {
		t.Fatalf("series %+v", s)
	}
	test := s.Result.List[0]
	if test.Status != "queued" || test.Page != ps[0] || test.Device != "mobile" || test.LCP != nil || test.Over != nil || test.Error != nil {
		t.Errorf("queued test %+v", test)
	}
	msgs := awstest.Receive(t, e.audits, 1)
	var job audit.Job
	if err := json.Unmarshal([]byte(msgs[0]), &job); err != nil || job.Series != s.ID || job.Test != test.ID || job.Page != ps[0].ID || job.Device != "mobile" {
		t.Fatalf("audit message %s (%v), want the test's", msgs[0], err)
	}
	anns := apitest.List[struct{ ID, Text string }](t, e.do("GET", w+"/annotations", apitest.ViewerKey, nil).Want(t, 200))
	if len(anns) != 1 || anns[0].Text != "Deploy v1.2.3" {
		t.Errorf("annotations %+v, want the series' description", anns)
	}

	// Every page on both devices when none is named.
	var all testSeries
	e.do("POST", w+"/testseries", apitest.AdminKey, nil).Want(t, 201).Decode(t, &all)
	if all.Count != 4 || len(all.Result.List) != 4 || all.Description != "" {
		t.Errorf("series of everything: %+v", all)
	}
	awstest.Receive(t, e.audits, 4)

	// The test ends as the audit worker ends it: values, report.
	ctx := context.Background()
	st := e.storedWebsite(site.ID)
	e.putGzipped("acme/"+site.ID+"/testseries/"+s.ID+"/"+test.ID+".json.gz", []byte(`{"lighthouseVersion":"13.5.0","audits":{},"categories":{}}`))
	if _, err := e.store.StartSeriesTest(ctx, st, test.ID, time.Time{}); err != nil {
		t.Fatal(err)
	}
	e.do("GET", w+"/testseries/"+s.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &s)
	if s.Status != "testing" || s.Result.List[0].Status != "testing" {
		t.Errorf("started: series %s, test %s", s.Status, s.Result.List[0].Status)
	}
	e.do("GET", w+"/tests/"+test.ID, apitest.ViewerKey, nil).Want(t, 404).Problem(t)
	if _, err := e.store.FinishSeriesTest(ctx, st, model.SeriesTest{ID: test.ID, Series: s.ID, Status: model.RunCompleted,
		Metrics: map[string]float64{"lcp": 2600.4, "cls": 0.09512, "performance_score": 71.6}, Method: model.MethodApplied,
		ReportKey: "acme/" + site.ID + "/testseries/" + s.ID + "/" + test.ID + ".json.gz"}); err != nil {
		t.Fatal(err)
	}
	e.do("GET", w+"/testseries/"+s.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &s)
	got := s.Result.List[0]
	if s.Status != "completed" || got.Status != "completed" || *got.LCP != 2600 || *got.CLS != 0.0951 || *got.Score != 72 ||
		*got.Over != 1 || *got.Risk != 1 || got.Report == nil || !strings.HasSuffix(*got.Report, w+"/tests/"+test.ID) || got.Method != model.MethodApplied {
		t.Errorf("completed series %s, test %+v", s.Status, got)
	}
	var report map[string]any
	e.do("GET", w+"/tests/"+test.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &report)
	if report["lighthouseVersion"] != "13.5.0" {
		t.Errorf("report %v", report)
	}

	// Newest first, a window at a time.
	var page1, page2 struct {
		Result struct {
			List   []testSeries
			Cursor string
		}
	}
	e.do("GET", w+"/testseries?limit=1", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &page1)
	e.do("GET", w+"/testseries?limit=1&cursor="+page1.Result.Cursor, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &page2)
	if len(page1.Result.List) != 1 || page1.Result.List[0].ID != all.ID || page1.Result.List[0].Result != nil ||
		len(page2.Result.List) != 1 || page2.Result.List[0].ID != s.ID || page2.Result.Cursor != "" || page2.Result.List[0].Status != "completed" {
		t.Errorf("windows %+v then %+v", page1.Result, page2.Result)
	}

	// Another account's: not found, as if they did not exist.
	e.do("GET", w+"/testseries/"+s.ID, apitest.OtherKey, nil).Want(t, 404).Problem(t)
	e.do("GET", w+"/tests/"+test.ID, apitest.OtherKey, nil).Want(t, 404).Problem(t)
	e.do("GET", w+"/testseries", apitest.OtherKey, nil).Want(t, 404).Problem(t)
	e.do("POST", w+"/testseries", apitest.OtherKey, nil).Want(t, 404).Problem(t)
	e.do("GET", w+"/testseries/ts_nosuchseries", apitest.AdminKey, nil).Want(t, 404).Problem(t)
	e.do("GET", w+"/tests/tt_nosuch_1", apitest.AdminKey, nil).Want(t, 404).Problem(t)

	// Bad bodies change nothing.
	e.do("POST", w+"/testseries", apitest.AdminKey, `{"pages":[],"branch":"main"}`).Want(t, 400).Problem(t, "branch")
	e.do("POST", w+"/testseries", apitest.AdminKey, `{"pages":[{"page_id":"`+ps[0].ID+`","browser":"x"}]}`).Want(t, 400).Problem(t)
	e.do("POST", w+"/testseries", apitest.AdminKey, `{"description":5}`).Want(t, 400).Problem(t, "description")
	e.do("POST", w+"/testseries", apitest.AdminKey, `{"pages":"all"}`).Want(t, 400).Problem(t, "pages")
	e.do("POST", w+"/testseries", apitest.AdminKey, `{"pages":[{"page_id":"nosuchpage"},{"device":"mobile"},{"page_id":"`+ps[0].ID+`","device":"tablet"}],
		"description":"`+strings.Repeat("é", 501)+`","initiator":"`+strings.Repeat("x", 51)+`"}`).
		Want(t, 422).Problem(t, "pages[0].page_id", "pages[1].page_id", "pages[2].device", "description", "initiator")
	e.do("POST", w+"/testseries", apitest.AdminKey, `{"description":"`+strings.Repeat("é", 500)+`","initiator":"GitHub"}`).Want(t, 201)
	awstest.Receive(t, e.audits, 4)

	// The on-demand audit limit: a series that would pass it is refused whole.
	if err := e.store.SetAccountLimits(ctx, "acme", map[string]int{string(quota.AuditsPerDay): 10}); err != nil {
		t.Fatal(err)
	}
	e.do("POST", w+"/testseries", apitest.ViewerKey, nil).Want(t, 429).Problem(t)
	if visible, inFlight, err := e.audits.Depth(ctx); err != nil || visible+inFlight != 0 {
		t.Errorf("refused series queued %d+%d audits (%v)", visible, inFlight, err)
	}
	e.do("POST", w+"/testseries", apitest.ViewerKey, `{"pages":[{"page_id":"`+ps[1].ID+`"}]}`).Want(t, 429) // 9 + 2 > 10
	e.do("POST", w+"/testseries", apitest.ViewerKey, `{"pages":[{"page_id":"`+ps[1].ID+`","device":"desktop"}]}`).Want(t, 201)
}

// TestTestSeriesPageSelection: the PageVitals CLI (`run-tests --website W --page ID,desktop`)
// names the pages to test in page, where the API says pages: the CLI's exact body tests that
// page on that device only. page is checked as pages is, its errors naming page; sending both
// is refused and queues nothing.
func TestTestSeriesPageSelection(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	ps := e.createPages(site.ID, "/", "/pricing")
	w := "/" + site.ID

	var s testSeries
	e.do("POST", w+"/testseries", apitest.ViewerKey, `{"website":"`+site.ID+`","page":[{"page_id":"`+ps[1].ID+`","device":"desktop"}],`+
		`"description":"Deploy 7f3c2e1","output":"json"}`).Want(t, 201).Decode(t, &s)
	if s.Count != 1 || s.Result == nil || len(s.Result.List) != 1 || s.Result.List[0].Page != ps[1] || s.Result.List[0].Device != "desktop" {
		t.Fatalf("series of the CLI's body %+v, want one test of %s on desktop", s, ps[1].ID)
	}
	awstest.Receive(t, e.audits, 1)

	// --page ID without a device: both devices, as in pages.
	e.do("POST", w+"/testseries", apitest.ViewerKey, `{"page":[{"page_id":"`+ps[0].ID+`"}]}`).Want(t, 201).Decode(t, &s)
	if s.Count != 2 || s.Result.List[0].Page != ps[0] || s.Result.List[1].Page != ps[0] {
		t.Errorf("series of one page on both devices %+v", s)
	}
	awstest.Receive(t, e.audits, 2)

	// The same checks, naming the field sent.
	e.do("POST", w+"/testseries", apitest.ViewerKey, `{"page":[{"page_id":"nosuchpage"},{"device":"mobile"},{"page_id":"`+ps[0].ID+`","device":"tablet"}]}`).
		Want(t, 422).Problem(t, "page[0].page_id", "page[1].page_id", "page[2].device")
	e.do("POST", w+"/testseries", apitest.ViewerKey, `{"page":"all"}`).Want(t, 400).Problem(t, "page")
	e.do("POST", w+"/testseries", apitest.ViewerKey, `{"page":[{"page_id":"`+ps[0].ID+`","browser":"x"}]}`).Want(t, 400).Problem(t)
	e.do("POST", w+"/testseries", apitest.ViewerKey, `{"pages":[{"page_id":"`+ps[0].ID+`"}],"page":[{"page_id":"`+ps[1].ID+`"}]}`).
		Want(t, 400).Problem(t, "page", "pages")
	if visible, inFlight, err := e.audits.Depth(context.Background()); err != nil || visible+inFlight != 0 {
		t.Errorf("refused series queued %d+%d audits (%v)", visible, inFlight, err)
	}
}

// TestTestSeriesCommit: a series records the commit it tests, lowercase, and shows it in the
// series and the list; what is not a commit hash is a 422 that starts nothing.
func TestTestSeriesCommit(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	ps := e.createPages(site.ID, "/")
	w := "/" + site.ID
	e.do("POST", w+"/testseries", apitest.AdminKey, `{"pages":[{"page_id":"`+ps[0].ID+`","device":"mobile"}],"commit":"main"}`).Want(t, 422)
	var committed struct{ ID, Commit string }
	e.do("POST", w+"/testseries", apitest.AdminKey, `{"pages":[{"page_id":"`+ps[0].ID+`","device":"mobile"}],"commit":"ABCDEF1234"}`).Want(t, 201).Decode(t, &committed)
	e.do("GET", w+"/testseries/"+committed.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &committed)
	if committed.Commit != "abcdef1234" {
		t.Errorf("the series' commit %q, want abcdef1234", committed.Commit)
	}
	list := apitest.List[struct{ ID, Commit string }](t, e.do("GET", w+"/testseries", apitest.ViewerKey, nil).Want(t, 200))
	if len(list) != 1 || list[0].Commit != "abcdef1234" {
		t.Errorf("the list %+v: one series, with its commit", list)
	}
	awstest.Receive(t, e.audits, 1)
}
