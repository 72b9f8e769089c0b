package auditworker_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

type seriesDoc struct {
	ID, Status  string
	Count       int
	FailedTests int `json:"failed_tests"`
	Result      struct {
		List []struct {
			ID, Device, Status, Error string
			Page                      struct{ ID, URL, Alias string }
			Performance               *float64 `json:"performance_score"`
			Accessibility             *float64 `json:"accessibility_score"`
			LCP                       *float64 `json:"lcp"`
			Exceeded                  *int     `json:"budgets_exceeded"`
		}
	}
}

// TestSeriesEndToEnd: on real Chromium and Lighthouse, a series of the fixture page on desktop
// completes with real scores, which are also the page's result of the day; a series of a page
// nobody answers ends failed with the test's error, after SQS's last delivery, and the page
// shows the same error; a redelivered message of the ended test audits nothing again.
func TestSeriesEndToEnd(t *testing.T) {
	e := newE2E(t, true)
	host, _ := fixtureSite(t)
	var site, down struct{ ID string }
	e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+host+`","method":"simulated"}`, 201, &site)
	var pages []struct{ ID string }
	e.api.Call(e.t, "POST", "/"+site.ID+"/settings/pages", `[{"url":"/","alias":"Home"}]`, 200, &pages)
	home := pages[0].ID
	e.api.Call(e.t, "POST", "/"+site.ID+"/budgets", `{"metric":"kb_total","operator":"lt","value":100,"device":"all"}`, 201, nil)

	// A port nothing listens on: the page is unreachable.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+closed+`","method":"simulated"}`, 201, &down)
	e.api.Call(e.t, "POST", "/"+down.ID+"/settings/pages", `[{"url":"/"}]`, 200, &pages)
	gone := pages[0].ID

	var ok, failed seriesDoc
	e.api.Call(e.t, "POST", "/"+site.ID+"/testseries", `{"pages":[{"page_id":"`+home+`","device":"desktop"}],"description":"Deploy v2.0.0","initiator":"CLI"}`, 201, &ok)
	e.api.Call(e.t, "POST", "/"+down.ID+"/testseries", `{"pages":[{"page_id":"`+gone+`","device":"desktop"}],"initiator":"CLI"}`, 201, &failed)

	// The worker consumes the audit queue until both series have ended.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.queue.Poll(ctx, 1, e.worker.HandleSQS, awstest.Log(t)); close(done) }()
	deadline := time.Now().Add(10 * time.Minute) // a bound for a stuck worker, not a speed check
	for {
		e.api.Call(e.t, "GET", "/"+site.ID+"/testseries/"+ok.ID, "", 200, &ok)
		e.api.Call(e.t, "GET", "/"+down.ID+"/testseries/"+failed.ID, "", 200, &failed)
		if (ok.Status == "completed" || ok.Status == "failed") && (failed.Status == "completed" || failed.Status == "failed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("series not ended after 10 minutes: %s, %s", ok.Status, failed.Status)
		}
		time.Sleep(500 * time.Millisecond)
	}
	cancel()
	<-done
	e.checkNothingLeft()

	test := ok.Result.List[0]
	if ok.Status != "completed" || ok.Count != 1 || ok.FailedTests != 0 || test.Status != "completed" || test.Page.Alias != "Home" {
		t.Fatalf("series of the fixture page: %+v", ok)
	}
	if test.Performance == nil || *test.Performance <= 0 || *test.Performance > 100 || test.Accessibility == nil ||
		test.LCP == nil || *test.LCP <= 0 || test.Exceeded == nil || *test.Exceeded != 1 {
		t.Errorf("test values %+v: want real scores, an lcp, the kb_total budget exceeded", test)
	}
	var report struct {
		LighthouseVersion string
		FinalDisplayedURL string
		Categories        map[string]struct{ Score *float64 }
	}
	e.api.Call(e.t, "GET", "/"+site.ID+"/tests/"+test.ID, "", 200, &report)
	if report.LighthouseVersion != "13.5.0" || report.Categories["performance"].Score == nil ||
		int(*report.Categories["performance"].Score*100+0.5) != int(*test.Performance) || !strings.Contains(report.FinalDisplayedURL, host) {
		t.Errorf("report %s of %s, performance %v; the test says %v", report.LighthouseVersion, report.FinalDisplayedURL, report.Categories["performance"].Score, *test.Performance)
	}
	// The test's result is the page's result of the day.
	if p := e.pageDetail(site.ID, home, "desktop").LatestMetrics["performance_score"]; p == nil || *p != *test.Performance {
		t.Errorf("page's latest performance %v, the test's %v", p, *test.Performance)
	}
	// The test keeps its diagnostics beside its report, which the page's day answers.
	var diag struct {
		Diagnostics struct {
			FinalURL string
			Requests []struct{ URL string }
		}
	}
	e.api.Call(e.t, "GET", "/"+site.ID+"/pages/"+home+"/diagnostics?device=desktop", "", 200, &diag)
	if !strings.Contains(diag.Diagnostics.FinalURL, host) || len(diag.Diagnostics.Requests) == 0 {
		t.Errorf("the test's diagnostics: %+v", diag.Diagnostics)
	}
	var anns struct {
		Result struct{ List []struct{ Text string } }
	}
	e.api.Call(e.t, "GET", "/"+site.ID+"/annotations", "", 200, &anns)
	if len(anns.Result.List) != 1 || anns.Result.List[0].Text != "Deploy v2.0.0" {
		t.Errorf("annotations %+v", anns.Result.List)
	}

	bad := failed.Result.List[0]
	if failed.Status != "failed" || failed.FailedTests != 1 || bad.Status != "failed" || bad.Error == "" || bad.Performance != nil {
		t.Fatalf("series of the unreachable page: %+v", failed)
	}
	t.Logf("the unreachable page's test: %s", bad.Error)
	broken := e.pageDetail(down.ID, gone, "desktop")
	if broken.LastError.Message != bad.Error || broken.LastError.Attempts != queue.MaxReceives {
		t.Errorf("page's last error %+v, the test's %q", broken.LastError, bad.Error)
	}
	e.api.Call(e.t, "GET", "/"+down.ID+"/tests/"+bad.ID, "", 404, nil)

	// The ended test's message again: nothing is audited, nothing counted twice.
	w, err := e.store.Website(context.Background(), "acme", site.ID)
	if err != nil {
		t.Fatal(err)
	}
	before, err := e.store.LabResults(context.Background(), w, home, "desktop", "20000101", "29991231")
	if err != nil || len(before) != 1 {
		t.Fatalf("lab results %+v, %v", before, err)
	}
	job := audit.Job{Account: "acme", Website: site.ID, Page: home, Device: "desktop", Queued: time.Now(), Series: ok.ID, Test: test.ID}
	if err := e.worker.Audit(context.Background(), job, 2); err != nil {
		t.Fatal(err)
	}
	var again seriesDoc
	e.api.Call(e.t, "GET", "/"+site.ID+"/testseries/"+ok.ID, "", 200, &again)
	if again.Status != "completed" || again.Result.List[0].Performance == nil || *again.Result.List[0].Performance != *test.Performance {
		t.Errorf("after a redelivery: %+v", again)
	}
	after, err := e.store.LabResults(context.Background(), w, home, "desktop", "20000101", "29991231")
	if err != nil || len(after) != 1 || !after[0].Audited.Equal(before[0].Audited) {
		t.Errorf("the page's result after a redelivery: %+v, %v; want the series' own, not a new audit", after, err)
	}
}

// TestSeriesPermanentFailureEndsAtOnce: a series test whose page the guard refuses, and one
// whose host does not resolve, end failed on their message's first delivery with the reason,
// which is also the page's last error (final, after one attempt); the message is not handed
// back for another delivery.
func TestSeriesPermanentFailureEndsAtOnce(t *testing.T) {
	e := newE2E(t, false) // the production guard: loopback addresses are refused
	host, _ := fixtureSite(t)
	type target struct {
		domain, want string
		site, page   string
		series       seriesDoc
	}
	targets := []*target{
		{domain: host, want: "refused: 127.0.0.1 is a loopback address"},
		{domain: "no-such-host.invalid", want: "no-such-host.invalid: the host does not resolve"},
	}
	for _, tg := range targets {
		var site struct{ ID string }
		e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+tg.domain+`","method":"simulated"}`, 201, &site)
		var pages []struct{ ID string }
		e.api.Call(e.t, "POST", "/"+site.ID+"/settings/pages", `[{"url":"/","alias":"Home"}]`, 200, &pages)
		tg.site, tg.page = site.ID, pages[0].ID
		e.api.Call(e.t, "POST", "/"+tg.site+"/testseries", `{"pages":[{"page_id":"`+tg.page+`","device":"mobile"}]}`, 201, &tg.series)
	}

	// The worker takes the queue as the event source mapping would; each message must be
	// handled (not reported failed) on its first delivery.
	var deliveries []string
	var failures int
	awstest.Drain(t, e.queue, 1, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		resp, err := e.worker.HandleSQS(ctx, ev)
		for _, m := range ev.Records {
			deliveries = append(deliveries, m.Attributes["ApproximateReceiveCount"])
		}
		failures += len(resp.BatchItemFailures)
		return resp, err
	}, func(handled int) bool { return handled == len(targets) })
	if failures != 0 || len(deliveries) != len(targets) || deliveries[0] != "1" || deliveries[1] != "1" {
		t.Errorf("deliveries (receive counts) %v with %d reported failed, want one first delivery each, none failed", deliveries, failures)
	}

	for _, tg := range targets {
		var got seriesDoc
		e.api.Call(e.t, "GET", "/"+tg.site+"/testseries/"+tg.series.ID, "", 200, &got)
		if got.Status != "failed" || got.FailedTests != 1 || len(got.Result.List) != 1 ||
			got.Result.List[0].Status != "failed" || got.Result.List[0].Error != tg.want {
			t.Errorf("%s: series %+v, want failed with %q", tg.domain, got, tg.want)
		}
		detail := e.pageDetail(tg.site, tg.page, "mobile")
		if detail.LastError.Message != tg.want || detail.LastError.Attempts != 1 {
			t.Errorf("%s: page's last error %+v, want %q after 1 attempt", tg.domain, detail.LastError, tg.want)
		}
	}
	if visible, inFlight, err := e.queue.Depth(context.Background()); err != nil || visible+inFlight != 0 {
		t.Errorf("the audit queue holds %d visible and %d in-flight messages (%v), want none", visible, inFlight, err)
	}
	e.checkNothingLeft()
}

// TestSeriesMessageOfEarlierQueuingIsSkipped: once a series test was queued again (a sweep of
// overdue work, the local service's start), a message of its earlier queuing that still
// arrives audits nothing and changes nothing: the newer message audits it.
func TestSeriesMessageOfEarlierQueuingIsSkipped(t *testing.T) {
	e := newE2E(t, true)
	host, _ := fixtureSite(t)
	var site struct{ ID string }
	e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+host+`","method":"simulated"}`, 201, &site)
	var pages []struct{ ID string }
	e.api.Call(e.t, "POST", "/"+site.ID+"/settings/pages", `[{"url":"/","alias":"Home"}]`, 200, &pages)
	var series seriesDoc
	e.api.Call(e.t, "POST", "/"+site.ID+"/testseries", `{"pages":[{"page_id":"`+pages[0].ID+`","device":"desktop"}]}`, 201, &series)
	msgs := awstest.Receive(t, e.queue, 1)
	var old audit.Job
	if len(msgs) != 1 || json.Unmarshal([]byte(msgs[0]), &old) != nil {
		t.Fatalf("messages %v, want the series' one", msgs)
	}
	ctx := context.Background()
	w, err := e.store.Website(ctx, "acme", site.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := e.store.RequeueSeriesTest(ctx, w, old.Test, old.Queued.Add(time.Minute), false); err != nil || !ok {
		t.Fatalf("queue again: %v, %v", ok, err)
	}
	if err := e.worker.Audit(ctx, old, 1); err != nil {
		t.Fatalf("the earlier message: %v, want skipped", err)
	}
	test, err := e.store.SeriesTest(ctx, w, old.Test)
	if err != nil || test.Status != model.RunQueued || test.Started != nil {
		t.Errorf("after the earlier message: %+v, %v; want still queued, not started", test, err)
	}
	if results, err := e.store.LabResults(ctx, w, old.Page, "desktop", "20000101", "29991231"); err != nil || len(results) != 0 {
		t.Errorf("lab results %+v, %v; want none", results, err)
	}
	e.checkNothingLeft()
}
