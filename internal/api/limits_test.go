package api_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// concurrently sends n requests at once and counts the answers by status.
func (e *testEnv) concurrently(n int, method string, path func(i int) string, key string, body func(i int) string) map[int]int {
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			r := e.do(method, path(i), key, body(i))
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return statuses
}

func constant(s string) func(int) string { return func(int) string { return s } }

// settledDepth is how many messages the audit queue holds once its count is the same twice in
// a row, 100 ms apart: SQS's (and the stand-in's) counts are approximate and lag behind sends
// made at once.
func settledDepth(e *testEnv) (int, error) {
	last := -1
	for range 50 {
		visible, inFlight, err := e.audits.Depth(context.Background())
		if err != nil {
			return 0, err
		}
		if visible+inFlight == last {
			return last, nil
		}
		last = visible + inFlight
		time.Sleep(100 * time.Millisecond)
	}
	return last, nil
}

// TestLimitsHoldUnderConcurrency: many requests at once never queue more than the account's
// limit, and exactly the limit when enough ask; the refusals say which limit, its value, and
// when it resets.
func TestLimitsHoldUnderConcurrency(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	w := "/" + site.ID
	var pages []page
	e.do("POST", w+"/settings/pages", apitest.AdminKey, `[{"url":"/"},{"url":"/a"}]`).Want(t, 200).Decode(t, &pages)
	var test multistepTest
	e.do("POST", w+"/multistep", apitest.AdminKey, `{"alias":"t","device":"mobile","steps":[{"type":"navigate","target":"/"}]}`).Want(t, 201).Decode(t, &test)
	if err := e.store.SetAccountLimits(context.Background(), "acme", map[string]int{
		string(quota.AuditsPerDay): 7, string(quota.RunsPerDay): 4, string(quota.PagesPerWebsite): 9}); err != nil {
		t.Fatal(err)
	}

	// On-demand audits, one each.
	got := e.concurrently(20, "POST", constant(w+"/audits"), apitest.AdminKey, constant(`{"pages":["`+pages[0].ID+`"],"devices":["desktop"]}`))
	if got[202] != 7 || got[429] != 13 {
		t.Errorf("audits: %v, want 7 accepted and 13 refused", got)
	}
	if n, err := settledDepth(e); err != nil || n != 7 {
		t.Errorf("audit queue holds %d, want 7 (%v)", n, err)
	}
	r := e.do("POST", w+"/audits", apitest.AdminKey, `{"devices":["desktop"]}`).Want(t, 429)
	p := r.Problem(t)
	resets := time.Date(time.Now().UTC().Year(), time.Now().UTC().Month(), time.Now().UTC().Day()+1, 0, 0, 0, 0, time.UTC)
	if p.Limit == nil || p.Limit.Name != "audits_per_day" || p.Limit.Value != 7 || p.Limit.Used != 7 || p.Limit.Resets == nil || !p.Limit.Resets.Equal(resets) {
		t.Errorf("limit %+v, want audits_per_day 7, 7 used, resets %s", p.Limit, resets)
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 86400 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}

	// Multistep runs: one test run at once by many, then run-all over the limit.
	got = e.concurrently(10, "POST", constant(w+"/multistep/"+test.ID+"/runs"), apitest.ViewerKey, constant(""))
	if got[201] != 4 || got[429] != 6 {
		t.Errorf("runs: %v, want 4 accepted and 6 refused", got)
	}
	e.do("POST", w+"/multistep/run-all", apitest.AdminKey, "").Want(t, 429)

	// Pages per website: two already, room for 7 more among 12 concurrent adds.
	var added atomic.Int32
	got = e.concurrently(12, "POST", constant(w+"/settings/pages"), apitest.AdminKey, func(i int) string { return fmt.Sprintf(`[{"url":"/p%d"}]`, i) })
	added.Store(int32(got[200]))
	if got[200] != 7 || got[422] != 5 {
		t.Errorf("pages: %v, want 7 added and 5 refused", got)
	}
	list := apitest.List[page](t, e.do("GET", w+"/settings/pages", apitest.AdminKey, nil))
	if len(list) != 9 {
		t.Errorf("%d pages stored, want 9", len(list))
	}
	p = e.do("POST", w+"/settings/pages", apitest.AdminKey, `[{"url":"/more"}]`).Want(t, 422).Problem(t)
	if p.Limit == nil || p.Limit.Name != "pages_per_website" || p.Limit.Value != 9 || p.Limit.Resets != nil {
		t.Errorf("pages limit %+v", p.Limit)
	}
	// A deleted page makes room for one.
	e.do("DELETE", w+"/settings/"+list[3].ID, apitest.AdminKey, nil).Want(t, 204)
	e.do("POST", w+"/settings/pages", apitest.AdminKey, `[{"url":"/more"}]`).Want(t, 200)
	e.do("POST", w+"/settings/pages", apitest.AdminKey, `[{"url":"/more2"}]`).Want(t, 422)
}

// TestDailyLimitsResetAndRefuseWholeRequests: a request asking more than is left queues
// nothing; the next UTC day starts again; another account has its own count.
func TestDailyLimitsResetAndRefuseWholeRequests(t *testing.T) {
	var now atomic.Pointer[time.Time]
	day1 := time.Date(2026, 11, 25, 23, 59, 0, 0, time.UTC)
	now.Store(&day1)
	e := newTestEnvAt(t, func() time.Time { return *now.Load() })
	site := e.createWebsite("example.com")
	w := "/" + site.ID
	var pages []page
	e.do("POST", w+"/settings/pages", apitest.AdminKey, `[{"url":"/"},{"url":"/a"},{"url":"/b"}]`).Want(t, 200).Decode(t, &pages)
	if err := e.store.SetAccountLimits(context.Background(), "acme", map[string]int{string(quota.AuditsPerDay): 5}); err != nil {
		t.Fatal(err)
	}
	e.do("POST", w+"/audits", apitest.AdminKey, `{"devices":["desktop"]}`).Want(t, 202) // 3 audits
	// Both devices of 3 pages is 6, more than the 2 left: refused whole.
	p := e.do("POST", w+"/audits", apitest.AdminKey, `{}`).Want(t, 429).Problem(t)
	if p.Limit == nil || p.Limit.Used != 3 || p.Limit.Value != 5 {
		t.Errorf("limit %+v, want 3 of 5 used", p.Limit)
	}
	if n, err := settledDepth(e); err != nil || n != 3 {
		t.Errorf("audit queue holds %d, want 3 (%v)", n, err)
	}
	e.do("POST", w+"/audits", apitest.AdminKey, `{"pages":["`+pages[0].ID+`","`+pages[1].ID+`"],"devices":["mobile"]}`).Want(t, 202)
	e.do("POST", w+"/audits", apitest.AdminKey, `{"pages":["`+pages[0].ID+`"],"devices":["mobile"]}`).Want(t, 429)

	// Another account counts on its own.
	other := e.do("POST", "/account/websites", apitest.OtherKey, `{"domain":"globex.example"}`).Want(t, 201)
	var o website
	other.Decode(t, &o)
	e.do("POST", "/"+o.ID+"/settings/pages", apitest.OtherKey, `[{"url":"/"}]`).Want(t, 200)
	e.do("POST", "/"+o.ID+"/audits", apitest.OtherKey, `{}`).Want(t, 202)

	// A minute later it is the next UTC day.
	day2 := day1.Add(time.Minute)
	now.Store(&day2)
	e.do("POST", w+"/audits", apitest.AdminKey, `{"devices":["desktop"]}`).Want(t, 202)
}

// TestBeaconLimit: a website's page views count up to its account's daily limit and no
// further (the aggregator holds it, whatever collect let through); once it is reached collect
// refuses beacons with 429 until the next UTC day; another website of the account counts on
// its own.
func TestBeaconLimit(t *testing.T) {
	var now atomic.Pointer[time.Time]
	day1 := time.Date(2026, 11, 25, 23, 50, 0, 0, time.UTC)
	now.Store(&day1)
	e := newTestEnvAt(t, func() time.Time { return *now.Load() })
	site, other := e.createWebsite("example.com"), e.createWebsite("other.example")
	if err := e.store.SetAccountLimits(context.Background(), "acme", map[string]int{string(quota.BeaconsPerDay): 5}); err != nil {
		t.Fatal(err)
	}
	send := func(w website, domain string) response {
		t.Helper()
		return e.beacon(fmt.Sprintf(`{"w":%q,"u":"https://%s/","m":{"lcp":1200}}`, w.ID, domain), "text/plain", "8.8.8.8:1", nil)
	}
	for range 8 {
		send(site, "example.com").Want(t, 202) // collect does not know the count yet
	}
	for range 2 {
		send(other, "other.example").Want(t, 202)
	}
	e.fold(10)
	views := func(w website) int {
		t.Helper()
		var rep struct{ Result struct{ Count int } }
		e.do("GET", "/"+w.ID+"/field-testing/pages?timing=lcp", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &rep)
		return rep.Result.Count
	}
	if got := views(site); got != 5 {
		t.Errorf("%d page views counted, want the limit of 5", got)
	}
	if got := views(other); got != 2 {
		t.Errorf("the other website counted %d, want 2", got)
	}

	// Collect reads the count again a minute later and refuses.
	later := day1.Add(61 * time.Second)
	now.Store(&later)
	r := send(site, "example.com").Want(t, 429)
	p := r.Problem(t)
	if p.Limit == nil || p.Limit.Name != string(quota.BeaconsPerDay) || p.Limit.Value != 5 || p.Limit.Used != 5 {
		t.Errorf("limit %+v, want beacons_per_day 5 of 5 used", p.Limit)
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 600 {
		t.Errorf("Retry-After %q, want the seconds to the next UTC day", r.Header.Get("Retry-After"))
	}
	send(other, "other.example").Want(t, 202)

	// The next UTC day counts again.
	day2 := day1.Add(11 * time.Minute)
	now.Store(&day2)
	send(site, "example.com").Want(t, 202)
}

// TestViewLimitHoldsUnderConcurrency: aggregators counting a website's views at once are
// granted exactly the limit between them, partly when a request straddles it.
func TestViewLimitHoldsUnderConcurrency(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	if err := e.store.SetAccountLimits(ctx, "acme", map[string]int{string(quota.BeaconsPerDay): 10}); err != nil {
		t.Fatal(err)
	}
	k := quota.NewKeeper(e.store, time.Now)
	var granted atomic.Int64
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := k.TakeViews(ctx, "acme", "site", "20261125", 1+i%3)
			if err != nil {
				t.Error(err)
			}
			granted.Add(int64(n))
		}()
	}
	wg.Wait()
	if got := granted.Load(); got != 10 {
		t.Errorf("%d views granted for a limit of 10 (24 asked)", got)
	}
	if n, err := k.TakeViews(ctx, "acme", "other-site", "20261125", 4); err != nil || n != 4 {
		t.Errorf("another website: %d granted (%v), want 4", n, err)
	}
}
