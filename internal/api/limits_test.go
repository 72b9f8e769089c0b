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
			statuses[r.status]++
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return statuses
}

func constant(s string) func(int) string { return func(int) string { return s } }

// TestLimitsHoldUnderConcurrency: many requests at once never queue more than the account's
// limit, and exactly the limit when enough ask; the refusals say which limit, its value, and
// when it resets.
func TestLimitsHoldUnderConcurrency(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	w := "/" + site.ID
	var pages []page
	e.do("POST", w+"/settings/pages", adminKey, `[{"url":"/"},{"url":"/a"}]`).want(t, 200).decode(t, &pages)
	var test multistepTest
	e.do("POST", w+"/multistep", adminKey, `{"alias":"t","device":"mobile","steps":[{"type":"navigate","target":"/"}]}`).want(t, 201).decode(t, &test)
	if err := e.store.SetAccountLimits(context.Background(), "acme", map[string]int{
		string(quota.AuditsPerDay): 7, string(quota.RunsPerDay): 4, string(quota.PagesPerWebsite): 9}); err != nil {
		t.Fatal(err)
	}

	// On-demand audits, one each.
	got := e.concurrently(20, "POST", constant(w+"/audits"), adminKey, constant(`{"pages":["`+pages[0].ID+`"],"devices":["desktop"]}`))
	if got[202] != 7 || got[429] != 13 {
		t.Errorf("audits: %v, want 7 accepted and 13 refused", got)
	}
	if visible, inFlight, err := e.audits.Depth(context.Background()); err != nil || visible+inFlight != 7 {
		t.Errorf("audit queue holds %d, want 7 (%v)", visible+inFlight, err)
	}
	r := e.do("POST", w+"/audits", adminKey, `{"devices":["desktop"]}`).want(t, 429)
	p := r.problem(t)
	resets := time.Date(time.Now().UTC().Year(), time.Now().UTC().Month(), time.Now().UTC().Day()+1, 0, 0, 0, 0, time.UTC)
	if p.Limit == nil || p.Limit.Name != "audits_per_day" || p.Limit.Value != 7 || p.Limit.Used != 7 || p.Limit.Resets == nil || !p.Limit.Resets.Equal(resets) {
		t.Errorf("limit %+v, want audits_per_day 7, 7 used, resets %s", p.Limit, resets)
	}
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 || s > 86400 {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}

	// Multistep runs: one test run at once by many, then run-all over the limit.
	got = e.concurrently(10, "POST", constant(w+"/multistep/"+test.ID+"/runs"), viewerKey, constant(""))
	if got[201] != 4 || got[429] != 6 {
		t.Errorf("runs: %v, want 4 accepted and 6 refused", got)
	}
	e.do("POST", w+"/multistep/run-all", adminKey, "").want(t, 429)

	// Pages per website: two already, room for 7 more among 12 concurrent adds.
	var added atomic.Int32
	got = e.concurrently(12, "POST", constant(w+"/settings/pages"), adminKey, func(i int) string { return fmt.Sprintf(`[{"url":"/p%d"}]`, i) })
	added.Store(int32(got[200]))
	if got[200] != 7 || got[422] != 5 {
		t.Errorf("pages: %v, want 7 added and 5 refused", got)
	}
	list := listOf[page](t, e.do("GET", w+"/settings/pages", adminKey, nil))
	if len(list) != 9 {
		t.Errorf("%d pages stored, want 9", len(list))
	}
	p = e.do("POST", w+"/settings/pages", adminKey, `[{"url":"/more"}]`).want(t, 422).problem(t)
	if p.Limit == nil || p.Limit.Name != "pages_per_website" || p.Limit.Value != 9 || p.Limit.Resets != nil {
		t.Errorf("pages limit %+v", p.Limit)
	}
	// A deleted page makes room for one.
	e.do("DELETE", w+"/settings/"+list[3].ID, adminKey, nil).want(t, 204)
	e.do("POST", w+"/settings/pages", adminKey, `[{"url":"/more"}]`).want(t, 200)
	e.do("POST", w+"/settings/pages", adminKey, `[{"url":"/more2"}]`).want(t, 422)
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
	e.do("POST", w+"/settings/pages", adminKey, `[{"url":"/"},{"url":"/a"},{"url":"/b"}]`).want(t, 200).decode(t, &pages)
	if err := e.store.SetAccountLimits(context.Background(), "acme", map[string]int{string(quota.AuditsPerDay): 5}); err != nil {
		t.Fatal(err)
	}
	e.do("POST", w+"/audits", adminKey, `{"devices":["desktop"]}`).want(t, 202) // 3 audits
	// Both devices of 3 pages is 6, more than the 2 left: refused whole.
	p := e.do("POST", w+"/audits", adminKey, `{}`).want(t, 429).problem(t)
	if p.Limit == nil || p.Limit.Used != 3 || p.Limit.Value != 5 {
		t.Errorf("limit %+v, want 3 of 5 used", p.Limit)
	}
	if visible, inFlight, err := e.audits.Depth(context.Background()); err != nil || visible+inFlight != 3 {
		t.Errorf("audit queue holds %d, want 3 (%v)", visible+inFlight, err)
	}
	e.do("POST", w+"/audits", adminKey, `{"pages":["`+pages[0].ID+`","`+pages[1].ID+`"],"devices":["mobile"]}`).want(t, 202)
	e.do("POST", w+"/audits", adminKey, `{"pages":["`+pages[0].ID+`"],"devices":["mobile"]}`).want(t, 429)

	// Another account counts on its own.
	other := e.do("POST", "/account/websites", otherKey, `{"domain":"globex.example"}`).want(t, 201)
	var o website
	other.decode(t, &o)
	e.do("POST", "/"+o.ID+"/settings/pages", otherKey, `[{"url":"/"}]`).want(t, 200)
	e.do("POST", "/"+o.ID+"/audits", otherKey, `{}`).want(t, 202)

	// A minute later it is the next UTC day.
	day2 := day1.Add(time.Minute)
	now.Store(&day2)
	e.do("POST", w+"/audits", adminKey, `{"devices":["desktop"]}`).want(t, 202)
}
