package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/pullrequest/pullrequesttest"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestCI runs the tool against the API on the stand-ins, with the tests ended as the audit
// worker ends them (the worker itself is tested end to end in internal/auditworker): met
// thresholds exit 0, a score below its minimum or a failed test exit 1 with the reason, each
// value beside its change since the previous completed series.
func TestCI(t *testing.T) {
	e := awstest.NewEnv(t)
	st, log := e.Store, e.Log
	q := e.Queue(queue.Settings{VisibilityTimeout: 30 * time.Second, MaxReceives: 3})
	apitest.Provision(t, st, apitest.Admin, apitest.Viewer)
	srv := httptest.NewServer(api.New(api.Deps{Store: st, Auditor: audit.NewQueue(st, q, log), Log: log}).Handler())
	t.Cleanup(srv.Close)
	admin := apitest.Client{Base: srv.URL, Key: apitest.AdminKey}
	var site struct{ ID string }
	admin.Call(t, "POST", "/account/websites", `{"domain":"example.com"}`, 201, &site)
	var pages []struct{ ID string }
	admin.Call(t, "POST", "/"+site.ID+"/settings/pages", `[{"url":"/","alias":"Home"},{"url":"/shop"}]`, 200, &pages)
	admin.Call(t, "POST", "/"+site.ID+"/budgets", `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`, 201, nil)
	w, err := st.Website(context.Background(), "acme", site.ID)
	if err != nil {
		t.Fatal(err)
	}

	// outcome ends each test of the running series as the worker would.
	var mu sync.Mutex
	var outcome func(model.SeriesTest) model.SeriesTest
	setOutcome := func(f func(model.SeriesTest) model.SeriesTest) { mu.Lock(); outcome = f; mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			list, _, _ := st.TestSeriesList(ctx, w, "", 1)
			for _, s := range list {
				tests, _ := st.SeriesTests(ctx, w, s.ID)
				for _, tt := range tests {
					if tt.Status == model.RunQueued {
						if _, err := st.StartSeriesTest(ctx, w, tt.ID, time.Time{}); err == nil {
							mu.Lock()
							end := outcome(tt)
							mu.Unlock()
							_, _ = st.FinishSeriesTest(ctx, w, end)
						}
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })

	env := map[string]string{"OPENVITALS_API": srv.URL, "OPENVITALS_WEBSITE": site.ID, "OPENVITALS_KEY": apitest.ViewerKey}
	ci := func(want int, args ...string) string {
		t.Helper()
		var out, errs bytes.Buffer
		if got := run(context.Background(), append(args, "-poll", "50ms"), func(k string) string { return env[k] }, &out, &errs); got != want {
			t.Fatalf("ci %v: exit %d, want %d\n%s%s", args, got, want, out.String(), errs.String())
		}
		return out.String() + errs.String()
	}
	values := func(perf, lcp float64) func(model.SeriesTest) model.SeriesTest {
		return func(tt model.SeriesTest) model.SeriesTest {
			tt.Status, tt.Metrics = model.RunCompleted, map[string]float64{"performance_score": perf, "accessibility_score": 100, "lcp": lcp, "cls": 0.01}
			return tt
		}
	}

	setOutcome(values(90, 1800))
	out := ci(0, "-description", "v1", "-min-performance", "80", "-max-budgets-exceeded", "0")
	if !strings.Contains(out, "completed, 4 tests, 0 failed") || !strings.Contains(out, "every threshold met") || strings.Contains(out, "changes since") {
		t.Errorf("first series:\n%s", out)
	}

	setOutcome(values(70, 2600))
	summary := filepath.Join(t.TempDir(), "summary.md")
	env["GITHUB_STEP_SUMMARY"] = summary
	out = ci(1, "-pages", pages[0].ID+":mobile", "-min-performance", "80", "-max-budgets-exceeded", "0")
	for _, want := range []string{"1 tests", "Home", "70 (-20)", "2600 (+800)", "100 (=)", "changes since",
		"performance_score 70, below the minimum 80", "1 budgets exceeded, at most 0 allowed"} {
		if !strings.Contains(out, want) {
			t.Errorf("second series: no %q in\n%s", want, out)
		}
	}
	if md, err := os.ReadFile(summary); err != nil || !strings.Contains(string(md), "70 (-20)") {
		t.Errorf("step summary %q, %v", md, err)
	}

	setOutcome(func(tt model.SeriesTest) model.SeriesTest {
		tt.Status, tt.Error = model.RunFailed, "net::ERR_CONNECTION_REFUSED"
		return tt
	})
	out = ci(1, "-pages", pages[1].ID+":desktop")
	if !strings.Contains(out, "/shop on desktop failed: net::ERR_CONNECTION_REFUSED") || !strings.Contains(out, "1 tests failed, at most 0 allowed") {
		t.Errorf("failed series:\n%s", out)
	}
	ci(0, "-pages", pages[1].ID+":desktop", "-max-failed", "-1")

	// On a GitHub pull request: one comment, added by the first push and edited by the next,
	// each value against the same test of the previous series, and a check run per push that
	// follows the outcome.
	gh := pullrequesttest.GitHub(t, "acme/shop", 12)
	event := filepath.Join(t.TempDir(), "event.json")
	if err := os.WriteFile(event, []byte(`{"action":"synchronize","pull_request":{"number":12,"head":{"sha":"deadbeef"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_EVENT_PATH": event, "GITHUB_TOKEN": "ghs_x",
		"GITHUB_REPOSITORY": "acme/shop", "GITHUB_API_URL": gh.URL} {
		env[k] = v
	}
	setOutcome(values(95, 1500))
	ci(0, "-pages", pages[0].ID+":mobile", "-min-performance", "80")
	setOutcome(values(60, 4000))
	out = ci(1, "-pages", pages[0].ID+":mobile", "-min-performance", "80")
	comments := gh.Comments()
	if len(comments) != 1 || !strings.Contains(out, "summary posted on the pull request") {
		t.Fatalf("comments %+v after two pushes; output\n%s", comments, out)
	}
	for _, want := range []string{"| Home (/) | mobile, simulated | 60 (-35) 🔺 | 4000 ms (+2500) 🔺 |", "lcp +2500", "base=tt_",
		"performance_score 60, below the minimum 80", srv.URL + "/app#/w/" + site.ID + "/compare?"} {
		if !strings.Contains(comments[0].Body, want) {
			t.Errorf("no %q in the comment\n%s", want, comments[0].Body)
		}
	}
	if runs := gh.CheckRuns(); len(runs) != 2 || runs[0]["conclusion"] != "success" || runs[1]["conclusion"] != "failure" || runs[1]["head_sha"] != "deadbeef" {
		t.Errorf("check runs %v", runs)
	}
	// -base names the series to compare with: the first pull-request run's (lcp 1500).
	var list struct {
		Result struct {
			List []struct{ ID string } `json:"list"`
		} `json:"result"`
	}
	admin.Call(t, "GET", "/"+site.ID+"/testseries?limit=2", "", 200, &list)
	out = ci(1, "-pages", pages[0].ID+":mobile", "-min-performance", "80", "-base", list.Result.List[1].ID, "-comment", "off")
	if !strings.Contains(out, "changes since "+list.Result.List[1].ID) || !strings.Contains(out, "4000 (+2500)") {
		t.Errorf("-base %s:\n%s", list.Result.List[1].ID, out)
	}

	// A push (no pull request in the event) comments nowhere.
	if err := os.WriteFile(event, []byte(`{"ref":"refs/heads/main"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	setOutcome(values(95, 1500))
	ci(0, "-pages", pages[0].ID+":mobile")
	if n := len(gh.Requests()); n != 6 {
		t.Errorf("%d requests to GitHub after a push build, want the 6 of the two pull-request runs", n)
	}
	delete(env, "GITHUB_ACTIONS")

	// In a GitLab merge-request pipeline: one note, with the job's token.
	gl := pullrequesttest.GitLab(t, "77", 3)
	for k, v := range map[string]string{"GITLAB_CI": "true", "CI_MERGE_REQUEST_IID": "3", "CI_PROJECT_ID": "77", "CI_API_V4_URL": gl.URL, "CI_JOB_TOKEN": "job"} {
		env[k] = v
	}
	ci(0, "-pages", pages[0].ID+":mobile")
	setOutcome(values(60, 4000))
	ci(1, "-pages", pages[0].ID+":mobile", "-min-performance", "80")
	if notes := gl.Comments(); len(notes) != 1 || !strings.Contains(notes[0].Body, "4000 ms (+2500) 🔺") {
		t.Errorf("notes %+v", notes)
	}

	// The base found by commit: push pipelines record their commit with the series; a merge
	// request's pipeline compares with its base commit's series (not the newest), and without
	// one with each page's last good day: its open lab regression's, else its newest daily audit.
	delete(env, "CI_MERGE_REQUEST_IID")
	env["CI_COMMIT_SHA"] = "abc1234def"
	setOutcome(values(95, 1500))
	ci(0, "-pages", pages[0].ID+":mobile")
	env["CI_COMMIT_SHA"] = "0123abcd"
	setOutcome(values(50, 5000))
	ci(0, "-pages", pages[0].ID+":mobile")
	admin.Call(t, "GET", "/"+site.ID+"/testseries?limit=2", "", 200, &list)
	var recorded struct{ Commit string }
	admin.Call(t, "GET", "/"+site.ID+"/testseries/"+list.Result.List[1].ID, "", 200, &recorded)
	if recorded.Commit != "abc1234def" {
		t.Errorf("the series' commit %q, want abc1234def", recorded.Commit)
	}
	if st := gl.Statuses(); len(st) != 0 {
		t.Errorf("commit statuses without a commit or on a push pipeline: %v", st)
	}
	env["CI_MERGE_REQUEST_IID"], env["CI_COMMIT_SHA"], env["CI_MERGE_REQUEST_DIFF_BASE_SHA"], env["CI_PIPELINE_ID"] = "3", "fedcba9", "abc1234", "4321"
	setOutcome(values(60, 4100))
	ci(1, "-pages", pages[0].ID+":mobile", "-min-performance", "80")
	if notes := gl.Comments(); len(notes) != 1 || !strings.Contains(notes[0].Body, "4100 ms (+2600) 🔺") || !strings.Contains(notes[0].Body, "base=tt_") {
		t.Errorf("against the base commit's series (lcp 1500): notes %+v", notes)
	}
	// Beside the note, the commit's status in the pipeline follows the outcome.
	if st := gl.Statuses(); len(st) != 1 || st[0]["sha"] != "fedcba9" || st[0]["state"] != "failed" || st[0]["pipeline_id"] != float64(4321) ||
		st[0]["name"] != "openvitals" || !strings.Contains(st[0]["target_url"].(string), "/testseries/ts_") {
		t.Errorf("commit statuses %v", st)
	}
	home, err := st.Page(context.Background(), w, pages[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	day := func(ago int) string { return now.AddDate(0, 0, -ago).Format(model.DayLayout) }
	for _, r := range []struct {
		ago int
		lcp float64
	}{{2, 2000}, {6, 1000}} {
		if err := st.PutLabResult(context.Background(), w, home, model.LabResult{Page: home.ID, Device: "mobile", Day: day(r.ago), Runs: 3,
			Audited: now.AddDate(0, 0, -r.ago), Metrics: map[string]float64{"lcp": r.lcp, "performance_score": 90}}); err != nil {
			t.Fatal(err)
		}
	}
	env["CI_MERGE_REQUEST_DIFF_BASE_SHA"] = "9999999" // no series of it
	ci(1, "-pages", pages[0].ID+":mobile", "-min-performance", "80")
	if notes := gl.Comments(); len(notes) != 1 || !strings.Contains(notes[0].Body, "4100 ms (+2100) 🔺") ||
		!strings.Contains(notes[0].Body, "base="+now.AddDate(0, 0, -2).Format(time.DateOnly)) {
		t.Errorf("against the newest daily audit (lcp 2000): notes %+v", notes)
	}
	reg := model.Regression{ID: model.RegressionID(w, "lcp", day(5)), Kind: model.KindRegression, Source: "lab", Page: home.ID, Device: "mobile",
		Metric: "lcp", LastGood: day(6), FirstBad: day(5), Before: model.Level{Median: 1000}, After: model.Level{Median: 2000}, Delta: 1000,
		Percent: 100, P: 0.001, Status: model.RegressionOpen, Detected: now}
	if _, err := st.PutRegression(context.Background(), w, reg); err != nil {
		t.Fatal(err)
	}
	ci(1, "-pages", pages[0].ID+":mobile", "-min-performance", "80")
	if notes := gl.Comments(); len(notes) != 1 || !strings.Contains(notes[0].Body, "4100 ms (+3100) 🔺") {
		t.Errorf("against the open regression's last good day (lcp 1000): notes %+v", notes)
	}
	setOutcome(values(95, 1200))
	ci(0, "-pages", pages[0].ID+":mobile", "-min-performance", "80")
	if st := gl.Statuses(); len(st) != 4 || st[3]["state"] != "success" {
		t.Errorf("commit statuses %v, the last one success", st)
	}

	ci(2, "-comment", "bitbucket")

	ci(2, "-pages", "nosuchpage")
	ci(2, "extra")
	delete(env, "OPENVITALS_KEY")
	ci(2)
}
