package api_test

// Latency and allocation benchmarks of the REST interface: every call goes through the full
// handler (routing, authentication, validation, encoding) and the store to DynamoDB Local,
// while the HTTP part stays in-process (httptest), so the figures are the service's own cost
// plus the stand-in's, not the network's. Each benchmark reports the p50 and p99 of its calls
// beside ns/op; -benchmem adds allocations. Helpers carry a bench prefix: the package's test
// files share one namespace. With -short (make test runs every benchmark once so), the
// benchmarks that seed much seed little.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/benchtest"
)

// benchEnv is the whole API over a table, purge queue and beacon queue of the benchmark's own,
// with an admin key of one account.
type benchEnv struct {
	handler http.Handler
	key     string
}

func benchSetup(b *testing.B) *benchEnv {
	b.Helper()
	clients := awstest.Clients(b)
	st := awstest.Store(b, clients)
	log := awstest.Log(b)
	pq := awstest.Queue(b, clients, service.PurgeQueueSettings)
	bq := awstest.Queue(b, clients, service.BeaconQueueSettings)
	srv := api.New(api.Deps{Store: st, Purger: purge.NewQueue(pq), Log: log,
		Beacons: rum.NewCollector(bq), Field: rum.NewReader(st)})
	e := &benchEnv{handler: srv.Handler(), key: apikey.Generate()}
	grant := apikey.Grant{Account: "bench", Role: model.RoleAdmin, Key: e.key}
	if err := apikey.Provision(context.Background(), st, grant, "bench"); err != nil {
		b.Fatal(err)
	}
	return e
}

// benchCall serves one request and fails the benchmark on any status but want.
func (e *benchEnv) benchCall(b testing.TB, method, path, body string, want int) *httptest.ResponseRecorder {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	rec := httptest.NewRecorder()
	e.handler.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: status %d, want %d; body %s", method, path, rec.Code, want, rec.Body)
	}
	return rec
}

// benchWebsite creates a website through the interface and returns its id.
func (e *benchEnv) benchWebsite(b *testing.B, domain string) string {
	var site struct {
		ID string `json:"id"`
	}
	rec := e.benchCall(b, "POST", "/account/websites", `{"domain":"`+domain+`"}`, http.StatusCreated)
	if err := json.Unmarshal(rec.Body.Bytes(), &site); err != nil || site.ID == "" {
		b.Fatalf("create website %s: %v %s", domain, err, rec.Body)
	}
	return site.ID
}

// benchListLen is the length of a {"result":{"list":[...]}} answer.
func benchListLen(b *testing.B, rec *httptest.ResponseRecorder) int {
	var out struct {
		Result struct {
			List []json.RawMessage `json:"list"`
		} `json:"result"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		b.Fatalf("decode list: %v %s", err, rec.Body)
	}
	return len(out.Result.List)
}

// benchPagesBody is a create-pages body of n new pages, distinct for every call number.
func benchPagesBody(call, n int) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for j := range n {
		if j > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"url":"/bench/%d/page-%d?lang=en","alias":"Page %d.%d"}`, call, j, call, j)
	}
	sb.WriteByte(']')
	return sb.String()
}

const benchBudgetBody = `{"metric":"lcp","operator":"lt","value":2500,"device":"mobile"}`

// benchLoop runs call once per iteration, timing each, and reports the p50 and p99 latency.
// call gets the iteration number, so that creating benchmarks can make every item distinct.
func benchLoop(b *testing.B, call func(i int)) { benchLoopPrepared(b, nil, call) }

// benchLoopPrepared is benchLoop with prepare, when not nil, run before each call outside the
// timing.
func benchLoopPrepared(b *testing.B, prepare, call func(i int)) {
	b.Helper()
	b.ReportAllocs()
	var samples []time.Duration
	for i := 0; b.Loop(); i++ {
		if prepare != nil {
			b.StopTimer()
			prepare(i)
			b.StartTimer()
		}
		start := time.Now()
		call(i)
		samples = append(samples, time.Since(start))
	}
	b.ReportMetric(benchtest.PercentileMS(samples, 0.50), "ms/p50")
	b.ReportMetric(benchtest.PercentileMS(samples, 0.99), "ms/p99")
	b.ReportMetric(benchtest.PercentileMS(samples, 1), "ms/max")
}

// BenchmarkListWebsites lists an account of 20 websites: a key lookup and one Query.
func BenchmarkListWebsites(b *testing.B) {
	e := benchSetup(b)
	for i := range 20 {
		e.benchWebsite(b, fmt.Sprintf("site-%d.example.com", i))
	}
	if n := benchListLen(b, e.benchCall(b, "GET", "/websites", "", http.StatusOK)); n != 20 {
		b.Fatalf("listed %d websites, want 20", n)
	}
	benchLoop(b, func(int) { e.benchCall(b, "GET", "/websites", "", http.StatusOK) })
}

// BenchmarkCreateWebsite creates websites with distinct domains: a key lookup and a two-item
// transaction (the website and its domain lock).
func BenchmarkCreateWebsite(b *testing.B) {
	e := benchSetup(b)
	benchLoop(b, func(i int) {
		e.benchCall(b, "POST", "/account/websites", fmt.Sprintf(`{"domain":"site-%d.example.com"}`, i), http.StatusCreated)
	})
}

// BenchmarkListPages lists a website of 100 pages: a key lookup, the website and one Query.
func BenchmarkListPages(b *testing.B) {
	e := benchSetup(b)
	path := "/" + e.benchWebsite(b, "example.com") + "/settings/pages"
	e.benchCall(b, "POST", path, benchPagesBody(-1, 100), http.StatusOK)
	if n := benchListLen(b, e.benchCall(b, "GET", path, "", http.StatusOK)); n != 100 {
		b.Fatalf("listed %d pages, want 100", n)
	}
	benchLoop(b, func(int) { e.benchCall(b, "GET", path, "", http.StatusOK) })
}

// BenchmarkCreatePages adds 10 pages a call: a key lookup, the website and a transaction of
// 10 conditional puts. A website takes the pages its account's limit allows (the benchmark's
// account has the service's default limits), then the calls go to a new one, made untimed.
func BenchmarkCreatePages(b *testing.B) {
	const perCall = 10
	e := benchSetup(b)
	callsPerSite := quota.Defaults[quota.PagesPerWebsite] / perCall
	var path string
	benchLoopPrepared(b, func(i int) {
		if i%callsPerSite == 0 {
			path = "/" + e.benchWebsite(b, fmt.Sprintf("site-%d.example.com", i/callsPerSite)) + "/settings/pages"
		}
	}, func(i int) { e.benchCall(b, "POST", path, benchPagesBody(i, perCall), http.StatusOK) })
}

// BenchmarkListBudgets lists a website's 10 budgets: a key lookup, the website and one Query.
func BenchmarkListBudgets(b *testing.B) {
	e := benchSetup(b)
	path := "/" + e.benchWebsite(b, "example.com") + "/budgets"
	for range 10 {
		e.benchCall(b, "POST", path, benchBudgetBody, http.StatusCreated)
	}
	if n := benchListLen(b, e.benchCall(b, "GET", path, "", http.StatusOK)); n != 10 {
		b.Fatalf("listed %d budgets, want 10", n)
	}
	benchLoop(b, func(int) { e.benchCall(b, "GET", path, "", http.StatusOK) })
}

// BenchmarkCreateBudget creates budgets: a key lookup, the website and one conditional put.
func BenchmarkCreateBudget(b *testing.B) {
	e := benchSetup(b)
	path := "/" + e.benchWebsite(b, "example.com") + "/budgets"
	benchLoop(b, func(int) { e.benchCall(b, "POST", path, benchBudgetBody, http.StatusCreated) })
}

// BenchmarkCollect posts beacons from 16 concurrent clients through the whole collect handler
// (website lookup, validation, normalization) and the group-committing collector into the SQS
// stand-in's beacon queue; it reports beacons per second. The stand-in's own speed is part of the
// figure, as SQS's would be.
func BenchmarkCollect(b *testing.B) {
	e := benchSetup(b)
	site := e.benchWebsite(b, "collect.example.com")
	body := `{"w":"` + site + `","u":"https://collect.example.com/Shop/Item-42?ref=x",` +
		`"m":{"lcp":2345.6,"fcp":1234.5,"fp":1200.1,"inp":180,"cls":0.052,"ttfb":310.2,"dns_time":12,` +
		`"connect_time":30.5,"server_time":210.4,"transfer_time":40.2,"dom_time":600.3,"fully_loaded_time":3100.8,` +
		`"transfer_size":45210,"dom_size":120345,"dom_elements":1432},"c":{"cart_items":2}}`
	b.SetParallelism(8) // 16 clients on 2 cores
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/collect", strings.NewReader(body))
			req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
			req.RemoteAddr = "8.8.8.8:4000"
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			if rec.Code != http.StatusAccepted {
				b.Errorf("collect: %d %s", rec.Code, rec.Body)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "beacons/s")
}
