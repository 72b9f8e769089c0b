package uxworker_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/google"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/ux"
	"github.com/openvitals/openvitals/internal/uxworker"
)

const (
	cruxKey = "test-crux-key"
	saEmail = "openvitals@acme-seo.iam.gserviceaccount.com"
)

type testEnv struct {
	t   *testing.T
	ctx context.Context
	*awstest.Env
	keys   *seal.Keyring
	google *fakeGoogle
	sa     serviceAccount
	clock  *fakeClock
	logs   *awstest.Output // what the collector says, to count it
	today  time.Time
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	e := &testEnv{t: t, ctx: context.Background(), Env: awstest.NewEnv(t), keys: seal.FixedKey(seal.GenerateKey()),
		sa: newServiceAccount(t, saEmail), clock: &fakeClock{now: time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}, logs: &awstest.Output{},
		today: time.Now().UTC()}
	e.google = newFakeGoogle(t, cruxKey, &e.sa.key.PublicKey, e.sa.email)
	if err := e.Store.EnsureAccount(e.ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	return e
}

// collector returns a collector over the fake Google with the test's clock.
func (e *testEnv) collector(key string) *uxworker.Worker {
	e.t.Helper()
	c, err := uxworker.NewWorker(e.ctx, google.Config{
		CrUXKey: key, CrUXEndpoint: e.google.URL(), SearchConsoleEndpoint: e.google.URL(), TokenURL: e.google.TokenURL(),
		Now: e.clock.Now, Sleep: e.clock.Sleep,
	}, e.Store, e.keys, slog.New(slog.NewTextHandler(e.logs, nil)))
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *testEnv) website(domain string, urls ...string) (model.Website, []model.Page) {
	e.t.Helper()
	pages := make([]model.Page, len(urls))
	for i, u := range urls {
		pages[i] = model.Page{URL: u, Alias: u}
	}
	w, _ := awstest.Website(e.t, e.Store, model.Website{Account: "acme", Domain: domain, DisplayName: domain}, pages)
	return w, pages
}

// integrate gives a website the Search Console integration, sealed as the API seals it.
func (e *testEnv) integrate(w model.Website, property string, key []byte, keys *seal.Keyring) model.SearchConsole {
	e.t.Helper()
	sealed, err := keys.Seal(e.ctx, key, model.IntegrationAAD(w, model.SearchConsoleKind))
	if err != nil {
		e.t.Fatal(err)
	}
	now := time.Now().UTC()
	sc := model.SearchConsole{Property: property, ServiceAccount: e.sa.email, Credentials: sealed, Created: now, Updated: now}
	if err := e.Store.PutSearchConsole(e.ctx, w, sc); err != nil {
		e.t.Fatal(err)
	}
	return sc
}

func (e *testEnv) job(w model.Website) ux.Job {
	return ux.Job{Account: w.Account, Website: w.ID, Day: model.Day(e.today), Queued: e.today}
}

func (e *testEnv) ux(w model.Website, p model.Page, device string) (model.UXResult, bool) {
	e.t.Helper()
	day := model.Day(e.today)
	rs, err := e.Store.UXResults(e.ctx, w, p.ID, device, day, day)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(rs) == 0 {
		return model.UXResult{}, false
	}
	return rs[0], true
}

// TestCollectThroughTheQueue runs a day's collection as in AWS: the daily handler queues one
// message per website on an SQS queue, and the collector consumes them. It checks what the
// collector stored from the APIs' answers (string CLS values, a missing INP, a 404 without
// data, a 429 then success, 503s then success, search rows of every shape), how it waited,
// and what the pages endpoints then serve.
func TestCollectThroughTheQueue(t *testing.T) {
	e := newTestEnv(t)
	site, pages := e.website("example.com", "/", "/pricing", "/blog/")
	home, pricing, blog := pages[0], pages[1], pages[2]
	other, otherPages := e.website("other.example", "/")
	e.integrate(site, "sc-domain:example.com", e.sa.json, e.keys)

	g := e.google
	g.crux["https://example.com/ PHONE"] = []answer{record("https://example.com/", "PHONE", false)}
	g.crux["https://example.com/ DESKTOP"] = []answer{
		{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":{"code":429,"message":"Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'chromeuxreport.googleapis.com'.","status":"RESOURCE_EXHAUSTED"}}`},
		record("https://example.com/", "DESKTOP", true),
	}
	g.crux["https://example.com/blog/ PHONE"] = []answer{
		googleError(503, "UNAVAILABLE", "The service is currently unavailable."),
		googleError(503, "UNAVAILABLE", "The service is currently unavailable."),
		record("https://example.com/blog/", "PHONE", true),
	}
	g.crux["https://other.example/ PHONE"] = []answer{record("https://other.example/", "PHONE", true)}
	g.search["sc-domain:example.com"] = []answer{searchRows(
		row("https://example.com/", 50, 1000, 3.4),
		row("https://www.example.com/", 10, 200, 1),
		row("https://example.com/pricing/", 3, 300, 8.2),
		row("http://example.com/Pricing?utm_source=news", 1, 100, 12.2),
		row("https://blog.example.com/", 900, 5000, 1.1),
		row("https://example.com/unmonitored", 7, 77, 4),
	)}

	// The daily fan-out's part: one message per website.
	q := awstest.Queue(t, e.Clients, service.UXQueueSettings)
	var jobs []ux.Job
	for _, w := range []model.Website{site, other} {
		if err := ux.NewQueue(q).DailyWebsite(e.ctx, model.SiteRef{Account: w.Account, Website: w.ID}, model.Day(e.today), e.today); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, e.job(w))
	}
	c := e.collector(cruxKey)
	pollCtx, stop := context.WithCancel(e.ctx)
	polled := make(chan struct{})
	go func() { defer close(polled); q.Poll(pollCtx, 1, c.HandleSQS, awstest.Log(t)) }()
	deadline := time.Now().Add(time.Minute) // a bound for a stuck collector, not a speed check
	for {
		p, err := ux.Track(e.ctx, e.Store, jobs)
		if err != nil {
			t.Fatal(err)
		}
		if p.Done == 2 {
			break
		}
		if p.Failed > 0 || p.Retrying > 0 || time.Now().After(deadline) {
			t.Fatalf("progress %+v; log:\n%s", p, e.logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	<-polled

	// Stored: the 75th percentiles and the shares of the three bins, in percent.
	hm, ok := e.ux(site, home, "mobile")
	want := map[string]model.Vital{
		"lcp":  {P75: 2406, Good: 79.25, NeedsImprovement: 12.15, Poor: 8.6},
		"cls":  {P75: 0.05, Good: 87.46, NeedsImprovement: 8.38, Poor: 4.16},
		"fcp":  {P75: 1932, Good: 66.12, NeedsImprovement: 21.02, Poor: 12.86},
		"ttfb": {P75: 1187, Good: 50.04, NeedsImprovement: 38.85, Poor: 11.11},
	}
	if !ok || len(hm.Vitals) != len(want) {
		t.Fatalf("home mobile record %+v, want exactly %v (no INP, no FID)", hm, want)
	}
	for k, v := range want {
		if hm.Vitals[k] != v {
			t.Errorf("home mobile %s = %+v, want %+v", k, hm.Vitals[k], v)
		}
	}
	if hd, ok := e.ux(site, home, "desktop"); !ok || hd.Vitals["inp"] != (model.Vital{P75: 176, Good: 81.03, NeedsImprovement: 15.12, Poor: 3.85}) {
		t.Errorf("home desktop record (after a 429) %+v", hd)
	}
	if _, ok := e.ux(site, blog, "mobile"); !ok {
		t.Error("blog mobile (after two 503s) was not stored")
	}
	for _, d := range []string{"mobile", "desktop"} {
		if r, ok := e.ux(site, pricing, d); ok {
			t.Errorf("pricing %s has a record without data: %+v", d, r)
		}
	}
	run, err := e.Store.UXRun(e.ctx, site, model.Day(e.today))
	if err != nil || run.UXRecords != 3 || run.UXNoData != 3 || run.SearchPages != 2 || run.Finished.IsZero() || run.Error != "" || run.Attempt != 1 {
		t.Errorf("run %+v (%v), want 3 records, 3 without data, 2 pages with search analytics, finished", run, err)
	}

	// Waits: 400 ms between queries (150 a minute): before each of the 8 daily queries and the
	// 12 history queries (each page's and the origin's on both devices, none fetched yet) but
	// the first, none before a retry the backoff already spaced; 7 s as Retry-After said; 1 s
	// and 2 s of backoff for the 503s. The two messages may come in either order, so compare
	// sorted.
	ms := time.Millisecond
	var wantSleeps []time.Duration
	for range 8 + 12 - 1 {
		wantSleeps = append(wantSleeps, 400*ms)
	}
	wantSleeps = append(wantSleeps, time.Second, 2*time.Second, 7*time.Second)
	if got := slices.Sorted(slices.Values(e.clock.Sleeps())); !slices.Equal(got, wantSleeps) {
		t.Errorf("slept %v, want %v", got, wantSleeps)
	}
	if g.cruxCalls["https://example.com/ DESKTOP"] != 2 || g.cruxCalls["https://example.com/blog/ PHONE"] != 3 || g.cruxCalls["https://example.com/pricing PHONE"] != 1 {
		t.Errorf("CrUX calls %v", g.cruxCalls)
	}

	// Search analytics: rows mapped by normalized path, www and http variants summed, other
	// hosts and unmonitored pages left out, the 14 days before the day of collection.
	results := map[string]model.SearchResult{}
	for _, p := range pages {
		rs, err := e.Store.SearchResults(e.ctx, site, p.ID, model.Day(e.today), model.Day(e.today))
		if err != nil || len(rs) != 1 {
			t.Fatalf("search results of %s: %v, %v", p.URL, rs, err)
		}
		results[p.URL] = rs[0]
	}
	if r := results["/"]; r.Impressions != 1200 || r.Clicks != 60 || r.Position < 2.999 || r.Position > 3.001 {
		t.Errorf("home search %+v, want 1200 impressions, 60 clicks, position 3 (weighted)", r)
	}
	if r := results["/pricing"]; r.Impressions != 400 || r.Clicks != 4 || r.Position < 9.199 || r.Position > 9.201 {
		t.Errorf("pricing search %+v, want 400 impressions, 4 clicks, position 9.2", r)
	}
	if r := results["/blog/"]; r.Impressions != 0 || r.Clicks != 0 {
		t.Errorf("blog search %+v, want nothing (blog.example.com is another host)", r)
	}
	end := e.today.AddDate(0, 0, -1)
	if len(g.searchBodies) != 1 {
		t.Fatalf("%d Search Console queries, want 1", len(g.searchBodies))
	}
	b := g.searchBodies[0]
	if b["startDate"] != end.AddDate(0, 0, -13).Format(time.DateOnly) || b["endDate"] != end.Format(time.DateOnly) || b["dataState"] != "all" ||
		!slices.Equal(toStrings(b["dimensions"]), []string{"page"}) {
		t.Errorf("Search Console query %v, want dimension page over the 14 days before today", b)
	}
	sc, err := e.Store.SearchConsole(e.ctx, site)
	if err != nil || sc.LastCollected.IsZero() || sc.LastError != "" {
		t.Errorf("integration after a collection %+v (%v)", sc, err)
	}
	// The day's message again (a stopped fan-out attempt's copy): the day was collected, so
	// nothing is asked of Google again.
	calls := len(g.searchBodies)
	if again, err := e.collector(cruxKey).Collect(e.ctx, e.job(site), 1); err != nil || !again.Finished.Equal(run.Finished) || len(g.searchBodies) != calls || g.cruxCalls["https://example.com/ PHONE"] != 1 {
		t.Errorf("a day collected again: %+v (%v), %d Search Console queries (want %d), CrUX calls %v", again, err, len(g.searchBodies), calls, g.cruxCalls)
	}
	if n, err := e.Store.SearchResults(e.ctx, other, otherPages[0].ID, "00000000", "99999999"); err != nil || len(n) != 0 {
		t.Errorf("the website without the integration has search analytics: %v, %v", n, err)
	}

	// Served through the API, checked against the OpenAPI document.
	srv := e.api()
	var list struct {
		Result struct {
			List []struct {
				URL, Device string
				Latest      map[string]any
			}
		}
	}
	srv.Call(t, "GET", "/"+site.ID+"/pages", "", 200, &list)
	for _, r := range list.Result.List {
		if r.URL != "/" {
			continue
		}
		if r.Latest["impressions"] != 1200.0 || r.Latest["clicks"] != 60.0 || r.Latest["CTR"] != 5.0 || r.Latest["position"] != 3.0 {
			t.Errorf("home %s search fields %v", r.Device, r.Latest)
		}
		if r.Device == "mobile" && (r.Latest["ux_lcp"] != 2406.0 || r.Latest["ux_cls"] != 0.05 || r.Latest["ux_passed"] != 1.0 || r.Latest["ux_inp"] != nil || r.Latest["lcp"] != nil) {
			t.Errorf("home mobile latest %v: ux fields, no INP, passed on LCP and CLS, no lab values", r.Latest)
		}
	}
	var detail struct{ LatestUx map[string]any }
	srv.Call(t, "GET", "/"+site.ID+"/pages/"+home.ID+"?device=mobile", "", 200, &detail)
	lcp, _ := detail.LatestUx["lcp"].(map[string]any)
	if detail.LatestUx["passed"] != true || lcp["value"] != 2406.0 || lcp["green"] != 79.25 || lcp["yellow"] != 12.15 || lcp["red"] != 8.6 || detail.LatestUx["inp"] != nil {
		t.Errorf("latestUx %v", detail.LatestUx)
	}
	var otherList struct {
		Result struct{ List []map[string]any }
	}
	srv.Call(t, "GET", "/"+other.ID+"/pages", "", 200, &otherList)
	for _, r := range otherList.Result.List {
		latest, _ := r["latest"].(map[string]any)
		if _, ok := latest["impressions"]; ok {
			t.Errorf("other.example without the integration shows search fields: %v", latest)
		}
		if r["device"] == "mobile" && latest["ux_inp"] != 176.0 {
			t.Errorf("other.example mobile %v", latest)
		}
	}
	var integration map[string]any
	srv.Call(t, "GET", "/"+site.ID+"/integrations/search-console", "", 200, &integration)
	if integration["lastCollected"] == nil || integration["lastError"] != nil || strings.Contains(mustJSON(integration), "PRIVATE") {
		t.Errorf("integration %v", integration)
	}
}

// TestTransientFailuresAreRetriedBySQS shows an API that keeps answering 503: five attempts
// with growing backoff, then the collection fails for SQS to deliver again, without querying
// the other pages; the run says why.
func TestTransientFailuresAreRetriedBySQS(t *testing.T) {
	e := newTestEnv(t)
	site, _ := e.website("example.com", "/", "/pricing")
	e.google.crux["https://example.com/ PHONE"] = []answer{googleError(503, "UNAVAILABLE", "The service is currently unavailable.")}
	c := e.collector(cruxKey)
	body, _ := json.Marshal(e.job(site))
	ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: string(body), Attributes: map[string]string{"ApproximateReceiveCount": "2"}}}}
	resp, err := c.HandleSQS(e.ctx, ev)
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Fatalf("HandleSQS = %+v, %v; want m1 reported failed", resp, err)
	}
	if n := e.google.cruxCalls["https://example.com/ PHONE"]; n != 5 {
		t.Errorf("%d attempts, want 5", n)
	}
	if n := e.google.cruxCalls["https://example.com/pricing PHONE"] + e.google.cruxCalls["https://example.com/ DESKTOP"]; n != 0 {
		t.Errorf("%d queries after the API kept failing, want none", n)
	}
	var backoffs []time.Duration
	for _, d := range e.clock.Sleeps() {
		if d >= time.Second {
			backoffs = append(backoffs, d)
		}
	}
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}; !slices.Equal(backoffs, want) {
		t.Errorf("backoffs %v, want %v", backoffs, want)
	}
	run, err := e.Store.UXRun(e.ctx, site, model.Day(e.today))
	if err != nil || !run.Finished.IsZero() || run.Attempt != 2 || !strings.Contains(run.Error, "503") {
		t.Errorf("run %+v (%v), want unfinished, attempt 2, the 503 as error", run, err)
	}
	p, _ := ux.Track(e.ctx, e.Store, []ux.Job{e.job(site)})
	if p.Retrying != 1 {
		t.Errorf("progress %+v, want retrying", p)
	}

	// A malformed message is reported failed, so that it ends in the dead-letter queue.
	resp, _ = c.HandleSQS(e.ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m2", Body: "{not json"}}})
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m2" {
		t.Errorf("malformed message not reported failed: %+v", resp)
	}
}

// TestRefusalsAreRecordedNotRetried shows answers that asking again would not change: an
// invalid CrUX key, a property the service account may not read, a key Google refuses, and
// credentials sealed under another key. Each is recorded where a user sees it; none fails the
// message.
func TestRefusalsAreRecordedNotRetried(t *testing.T) {
	e := newTestEnv(t)
	denied, _ := e.website("example.com", "/")
	e.integrate(denied, "sc-domain:example.com", e.sa.json, e.keys) // the fake grants no property: 403
	refusedKey, _ := e.website("refused.example", "/")
	stranger := newServiceAccount(t, "stranger@elsewhere.iam.gserviceaccount.com")
	e.integrate(refusedKey, "sc-domain:refused.example", stranger.json, e.keys)
	rekeyed, _ := e.website("rekeyed.example", "/")
	e.integrate(rekeyed, "sc-domain:rekeyed.example", e.sa.json, seal.FixedKey(seal.GenerateKey()))

	c := e.collector("not-the-key")
	for _, w := range []model.Website{denied, refusedKey, rekeyed} {
		run, err := c.Collect(e.ctx, e.job(w), 1)
		if err != nil || run.Finished.IsZero() || !strings.Contains(run.Error, "API key not valid") {
			t.Errorf("%s: run %+v, %v; want finished, noting the refused CrUX key", w.Domain, run, err)
		}
		if n := e.google.cruxCalls["https://"+w.Domain+"/ PHONE"] + e.google.cruxCalls["https://"+w.Domain+"/ DESKTOP"]; n != 1 {
			t.Errorf("%s: %d CrUX queries with a refused key, want 1", w.Domain, n)
		}
	}
	for _, tc := range []struct {
		w    model.Website
		want string
	}{
		{denied, "User does not have sufficient permission for site 'sc-domain:example.com'"},
		{refusedKey, "the service account's key was refused: invalid_grant: Invalid JWT Signature."},
		{rekeyed, "cannot be opened"},
	} {
		w, want := tc.w, tc.want
		sc, err := e.Store.SearchConsole(e.ctx, w)
		if err != nil || !strings.Contains(sc.LastError, want) || sc.LastErrorAt.IsZero() || !sc.LastCollected.IsZero() {
			t.Errorf("%s: integration %q at %v (%v), want %q", w.Domain, sc.LastError, sc.LastErrorAt, err, want)
		}
	}
	if n := e.google.searchCalls["sc-domain:example.com"]; n != 1 {
		t.Errorf("%d Search Console queries for a denied property, want 1", n)
	}
	if e.google.tokens != 2 {
		t.Errorf("%d token exchanges, want 2 (none with credentials that do not open)", e.google.tokens)
	}
}

// TestWithoutCrUXKey shows the collector without a CrUX key: it says so once, queries nothing
// from CrUX, and still collects search analytics.
func TestWithoutCrUXKey(t *testing.T) {
	e := newTestEnv(t)
	site, _ := e.website("example.com", "/")
	e.integrate(site, "sc-domain:example.com", e.sa.json, e.keys)
	e.google.search["sc-domain:example.com"] = []answer{searchRows(row("https://example.com/", 5, 100, 2))}
	c := e.collector("")
	for range 2 {
		run, err := c.Collect(e.ctx, e.job(site), 1)
		// The run's record says CrUX was not collected, and why, so make daily can say so.
		if err != nil || run.UXRecords != 0 || run.SearchPages != 1 || run.Error != "CrUX: "+uxworker.NoCrUXKey {
			t.Errorf("run %+v, %v; want search analytics only, and the note that CrUX has no key", run, err)
		}
	}
	if n := strings.Count(e.logs.String(), "OPENVITALS_CRUX_API_KEY is not set"); n != 1 {
		t.Errorf("said %d times that CrUX is off, want once:\n%s", n, e.logs)
	}
	if len(e.google.cruxCalls) != 0 {
		t.Errorf("CrUX queried without a key: %v", e.google.cruxCalls)
	}
	// A website without Search Console gets nothing at all: its collection counts skipped, not
	// done (make daily used to say "done" for it), and the other's done.
	bare, _ := e.website("bare.example", "/")
	if run, err := c.Collect(e.ctx, e.job(bare), 1); err != nil || !ux.Skipped(run) {
		t.Errorf("run %+v, %v; want it skipped", run, err)
	}
	p, err := ux.Track(e.ctx, e.Store, []ux.Job{e.job(site), e.job(bare)})
	if want := (queue.Progress{Done: 1, Skipped: 1}); err != nil || p != want {
		t.Errorf("Track = %+v, %v; want %+v", p, err, want)
	}
}

// TestDeletedWebsite shows a collection of a website deleted since it was queued: nothing to
// do, nothing queried.
func TestDeletedWebsite(t *testing.T) {
	e := newTestEnv(t)
	site, _ := e.website("example.com", "/")
	if _, err := e.Store.DeleteWebsite(e.ctx, site); err != nil {
		t.Fatal(err)
	}
	if _, err := e.collector(cruxKey).Collect(e.ctx, e.job(site), 1); err != nil || len(e.google.cruxCalls) != 0 {
		t.Errorf("Collect = %v, CrUX calls %v; want nothing done", err, e.google.cruxCalls)
	}
}

// api serves the store's data as the API functions do, called as acme's admin.
func (e *testEnv) api() apitest.Client {
	apitest.Provision(e.t, e.Store, apitest.Admin)
	return apitest.Client{Handler: api.New(api.Deps{Store: e.Store, Credentials: e.keys, Log: awstest.Log(e.t)}).Handler(), Key: apitest.AdminKey}
}

func toStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
