package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// beacon posts a beacon as navigator.sendBeacon does (text/plain) from a client address.
func (e *testEnv) beacon(body, contentType, remoteAddr string, header map[string]string) response {
	e.t.Helper()
	req := httptest.NewRequest("POST", "/collect", strings.NewReader(body))
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.RemoteAddr = remoteAddr
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return e.send(req)
}

// fold runs the queued page views through the rebatcher and the aggregator.
func (e *testEnv) fold(views int) {
	e.t.Helper()
	rb := rumworker.NewRebatcherWith(e.rums, e.store, e.flush, geo.Country, awstest.Log(e.t))
	agg := rumworker.NewAggregatorWith(e.store, e.rums, quota.NewKeeper(e.store, time.Now), awstest.Log(e.t), geo.Country)
	appended, messages := 0, 0
	var mu sync.Mutex
	awstest.Drain(e.t, e.rum, 10, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		resp, err := rb.HandleSQS(ctx, ev)
		if err == nil && len(resp.BatchItemFailures) == 0 {
			mu.Lock()
			sites := map[string]bool{}
			for _, r := range ev.Records {
				var b rum.Batch
				_ = json.Unmarshal([]byte(r.Body), &b)
				appended += len(b.Views)
				sites[b.Website] = true
			}
			messages += len(sites) // a request to fold per website and delivery (no delay: each its own)
			mu.Unlock()
		}
		return resp, err
	}, func(int) bool { mu.Lock(); defer mu.Unlock(); return appended >= views })
	awstest.Drain(e.t, e.flush, 10, agg.HandleSQS, func(n int) bool { return n >= messages })
}

func TestSnippet(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	res := e.do("GET", "/rum/"+site.ID+".js", "", nil).Want(t, 200)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/javascript") {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "public") || !strings.Contains(cc, "max-age") {
		t.Errorf("Cache-Control %q: the snippet is cacheable", cc)
	}
	body := string(res.Body)
	if !strings.Contains(body, "var webVitals=") || !strings.Contains(body, `})("`+site.ID+`", 1, "`+model.LabUserAgentMark+`");`) {
		t.Errorf("the snippet is not web-vitals plus the reporter bound to %s", site.ID)
	}
	req := httptest.NewRequest("GET", "/rum/"+site.ID+".js", nil)
	req.Header.Set("If-None-Match", res.Header.Get("ETag"))
	e.send(req).Want(t, http.StatusNotModified)
	for _, path := range []string{"/rum/nosuchsite00.js", "/rum/" + site.ID, "/rum/" + site.ID + ".css", "/rum/%3Cscript%3E.js"} {
		res := e.do("GET", path, "", nil).Want(t, 404)
		res.Problem(t)
		if strings.Contains(string(res.Body), "script>") {
			t.Errorf("%s: the answer repeats the request", path)
		}
	}
}

func TestCollectRefusesBadBeaconsAndQueuesNothing(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	const marker = "zq-marker-7731"
	good := func(url string, metrics string) string {
		return fmt.Sprintf(`{"w":%q,"u":%q,"m":%s}`, site.ID, url, metrics)
	}
	for _, c := range []struct {
		name, body, contentType string
		status                  int
	}{
		{"oversize", good("https://example.com/", `{"lcp":1}`)[:40] + strings.Repeat(" ", 17<<10) + `}`, "text/plain", 413},
		{"garbage", marker + "\x00\xff{{{", "text/plain;charset=UTF-8", 400},
		{"not an object", `["` + marker + `"]`, "text/plain", 400},
		{"empty", ``, "text/plain", 400},
		{"form", "w=" + marker, "application/x-www-form-urlencoded", 415},
		{"unknown website", fmt.Sprintf(`{"w":"nosuchsite00","u":"https://example.com/%s","m":{"lcp":1}}`, marker), "text/plain", 404},
		{"bad website id", fmt.Sprintf(`{"w":"<%s>","u":"https://example.com/","m":{"lcp":1}}`, marker), "text/plain", 400},
		{"other domain", good("https://evil.example.net/"+marker, `{"lcp":1}`), "text/plain", 422},
		{"subdomain", good("https://shop.example.com/", `{"lcp":1}`), "text/plain", 422},
		{"lookalike", good("https://example.com.evil.net/", `{"lcp":1}`), "application/json", 422},
		{"not http", good("javascript:alert('"+marker+"')", `{"lcp":1}`), "text/plain", 400},
		{"only unusable values", good("https://example.com/", `{"lcp":"NaN","cls":-1,"inp":1e300,"`+marker+`":5}`), "text/plain", 422},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.t = t
			res := e.beacon(c.body, c.contentType, "203.0.113.7:4000", nil).Want(t, c.status)
			res.Problem(t)
			if strings.Contains(string(res.Body), marker) {
				t.Errorf("the answer repeats the input: %s", res.Body)
			}
			if res.Header.Get("Access-Control-Allow-Origin") != "*" {
				t.Error("an error without CORS headers: the browser would hide it")
			}
		})
	}
	e.t = t
	if got := awstest.Receive(t, e.rum, 0); len(got) != 0 {
		t.Errorf("bad beacons queued %d messages: %v", len(got), got)
	}
}

func TestCollectQueuesNormalizedViews(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	pre := e.do("OPTIONS", "/collect", "", nil).Want(t, 204)
	if pre.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight headers %v", pre.Header)
	}
	beacons := []struct{ url, metrics, addr string }{
		{"https://www.example.com/Shop/?utm=x#top", `{"lcp":2200.4,"cls":0.1234,"inp":"NaN","ttfb":310}`, "8.8.8.8:1234"},
		{"https://example.com/shop", `{"lcp":1800,"cls":0.05,"dom_elements":900}`, "127.0.0.1:5555"},
		{"https://example.com/", `{"lcp":900,"fcp":400}`, "8.8.8.8:999"},
	}
	for _, b := range beacons {
		body := fmt.Sprintf(`{"w":%q,"u":%q,"m":%s,"c":{"cart_items":2}}`, site.ID, b.url, b.metrics)
		// A forged country header is not trusted unless the deployment says so.
		e.beacon(body, "text/plain;charset=UTF-8", b.addr, map[string]string{"CloudFront-Viewer-Country": "FR"}).Want(t, 202)
	}
	msgs := awstest.Receive(t, e.rum, 3)
	var views []rum.View
	for _, m := range msgs {
		var b rum.Batch
		if err := json.Unmarshal([]byte(m), &b); err != nil {
			t.Fatal(err)
		}
		if b.Website != site.ID || b.Account != "acme" {
			t.Errorf("batch of %s/%s", b.Account, b.Website)
		}
		views = append(views, b.Views...)
	}
	if len(views) != 3 {
		t.Fatalf("%d views queued, want 3", len(views))
	}
	v := views[0]
	if v.Page != "/shop" || v.Country != "" || v.IP != "8.8.8.8" || v.Metrics["lcp"] != 2200.4 || v.Metrics["cart_items"] != 2 {
		t.Errorf("first view %+v", v)
	}
	if _, ok := v.Metrics["inp"]; ok {
		t.Error("a NaN metric was kept")
	}
	if views[2].Page != "/" {
		t.Errorf("home page key %q", views[2].Page)
	}
}

// openvitals' own browsers are never counted; other lab agents only where the website
// excludes them. The views kept carry their segments, monitored pages and attribution.
func TestCollectDropsLabAgentsAndKeepsSegments(t *testing.T) {
	var mu sync.Mutex
	clock := time.Now()
	e := newTestEnvAt(t, func() time.Time { mu.Lock(); defer mu.Unlock(); return clock })
	site := e.createWebsite("example.com")
	const (
		headless = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"
		android  = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36"
	)
	body := fmt.Sprintf(`{"w":%q,"u":"https://example.com/product/1?from=ad","m":{"lcp":1000},"s":{"n":"reload","e":"3g"},
		"a":{"inp":{"e":"button#buy","t":"pointer","p":[1,2,3],"s":[{"u":"https://www.googletagmanager.com/gtm.js?id=x","f":"h","d":90}]}}}`, site.ID)
	own := map[string]string{"User-Agent": android + " " + model.LabUserAgentMark}
	e.beacon(body, "text/plain", "8.8.8.8:1", own).Want(t, 204)
	e.beacon(body, "text/plain", "8.8.8.8:1", map[string]string{"User-Agent": headless}).Want(t, 202)
	if err := e.store.PutRUMSettings(context.Background(), "acme", site.ID, model.RUMSettings{ExcludeLabAgents: true,
		Groups: []model.PageGroup{{ID: 4, Name: "Products", Pattern: "/product/*"}}}); err != nil {
		t.Fatal(err)
	}
	page := map[string]any{"url": "/product/1?from=ad"}
	e.do("POST", "/"+site.ID+"/settings/pages", apitest.AdminKey, []any{page}).Want(t, 200)
	// The settings and pages apply once the website's cached entry expires (a minute).
	mu.Lock()
	clock = clock.Add(2 * time.Minute)
	mu.Unlock()
	e.beacon(body, "text/plain", "8.8.8.8:1", map[string]string{"User-Agent": headless}).Want(t, 204)
	e.beacon(body, "text/plain", "8.8.8.8:1", own).Want(t, 204)
	e.beacon(body, "text/plain", "8.8.8.8:1", map[string]string{"User-Agent": android}).Want(t, 202)
	var views []rum.View
	for _, m := range awstest.Receive(t, e.rum, 2) {
		var b rum.Batch
		if err := json.Unmarshal([]byte(m), &b); err != nil {
			t.Fatal(err)
		}
		views = append(views, b.Views...)
	}
	if len(views) != 2 {
		t.Fatalf("%d views queued, want the headless one before the exclusion and the phone's", len(views))
	}
	v := views[1]
	seg := v.Segments
	if rum.DimGroup.Of(seg) != 4 || rum.DimDevice.ValueName(rum.DimDevice.Of(seg)) != "mobile" ||
		rum.DimNavigation.ValueName(rum.DimNavigation.Of(seg)) != "reload" || rum.DimConnection.ValueName(rum.DimConnection.Of(seg)) != "3g" ||
		len(v.Pages) != 1 {
		t.Errorf("view %+v segments %v", v, seg)
	}
	if a := v.Attribution; a == nil || a.INP == nil || a.INP.Target != "button#buy" || len(a.INP.Scripts) != 1 ||
		a.INP.Scripts[0].Entity != "Google Tag Manager" || a.INP.Scripts[0].URL != "https://www.googletagmanager.com/gtm.js" {
		t.Errorf("attribution %+v", v.Attribution)
	}
}

func TestCollectTrustsViewerCountryWhereConfigured(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	srv := api.New(api.Deps{Store: e.store, Log: awstest.Log(t), Beacons: rum.NewCollector(e.rum), TrustViewerCountry: true})
	e.handler = srv.Serve(api.RUM)
	body := fmt.Sprintf(`{"w":%q,"u":"https://example.com/","m":{"lcp":1000}}`, site.ID)
	e.beacon(body, "text/plain", "8.8.8.8:1", map[string]string{"CloudFront-Viewer-Country": "JP"}).Want(t, 202)
	e.beacon(body, "text/plain", "8.8.8.8:1", map[string]string{"CloudFront-Viewer-Country": "j<"}).Want(t, 202)
	var got []string
	for _, m := range awstest.Receive(t, e.rum, 2) {
		var b rum.Batch
		_ = json.Unmarshal([]byte(m), &b)
		for _, v := range b.Views {
			got = append(got, v.Country+"|"+v.IP)
		}
	}
	if strings.Join(got, ",") != "JP|,|8.8.8.8" {
		t.Errorf("views %v, want JP from the header, then the address for a malformed header", got)
	}
}

func TestFieldReports(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	send := func(url, metrics, addr string) {
		body := fmt.Sprintf(`{"w":%q,"u":%q,"m":%s,"c":{"cart_items":3}}`, site.ID, url, metrics)
		e.beacon(body, "text/plain", addr, nil).Want(t, 202)
	}
	send("https://example.com/", `{"lcp":1000,"cls":0.1,"inp":40}`, "8.8.8.8:1")
	send("https://example.com/", `{"lcp":2000,"cls":0.2,"inp":200}`, "8.8.8.8:1")
	send("https://example.com/", `{"lcp":3000,"cls":0.3}`, "127.0.0.1:1")
	send("https://example.com/", `{"lcp":4000,"cls":0.4}`, "8.8.8.8:1")
	send("https://example.com/Docs/", `{"lcp":1500,"cls":0.01234}`, "127.0.0.1:1")
	e.fold(5)

	type item map[string]float64
	var rep struct {
		Result struct {
			Count int             `json:"count"`
			List  map[string]item `json:"list"`
		} `json:"result"`
	}
	w := "/" + site.ID + "/field-testing"
	e.do("GET", w+"/pages", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &rep)
	if rep.Result.Count != 2 || rep.Result.List["/"]["count"] != 4 || rep.Result.List["/"]["percent"] != 80 || rep.Result.List["/docs"]["count"] != 1 {
		t.Errorf("pages: %+v", rep.Result)
	}
	if _, ok := rep.Result.List["/"]["lcp"]; ok {
		t.Error("a metric without timing")
	}
	// "+" arrives as a space; an encoded plus and a comma work too.
	for _, q := range []string{"?timing=lcp+cls+inp+cart_items", "?timing=lcp%2Bcls%2Binp%2Bcart_items", "?timing=lcp,cls,inp,cart_items"} {
		rep.Result.List = nil
		e.do("GET", w+"/pages"+q, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &rep)
		home := rep.Result.List["/"]
		// p75 of 1000..4000 by rank floor(0.75*3) = 2: 3000, within 1 %; inp has two values.
		if rep.Result.Count != 5 || math.Abs(home["lcp"]-3000) > 30 || math.Abs(home["cls"]-0.3) > 0.003 ||
			math.Abs(home["inp"]-40) > 1 || math.Abs(home["cart_items"]-3) > 0.03 {
			t.Errorf("%s: count %d, home %v", q, rep.Result.Count, home)
		}
		if docs := rep.Result.List["/docs"]; docs["cls"] != math.Round(docs["cls"]*1000)/1000 || docs["lcp"] != math.Round(docs["lcp"]) {
			t.Errorf("%s: /docs %v: cls has 3 decimals and ms are integers", q, docs)
		}
		if _, ok := rep.Result.List["/docs"]["inp"]; ok {
			t.Errorf("%s: inp for a page without any", q)
		}
	}
	rep.Result.List = nil
	e.do("GET", w+"/countries", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &rep)
	if rep.Result.Count != 5 || rep.Result.List["US"]["count"] != 3 || rep.Result.List["XX"]["count"] != 2 || rep.Result.List["US"]["percent"] != 60 {
		t.Errorf("countries: %+v", rep.Result)
	}
	e.do("GET", w+"/countries?timing=ttfb", apitest.ViewerKey, nil).Want(t, 200)
	for _, q := range []string{"?timing=bogus-name", "?timing=", "?timing=never_sent", "?date=2026", "?date=20261131-20261201", "?date=20261201-20261101"} {
		e.do("GET", w+"/pages"+q, apitest.ViewerKey, nil).Want(t, 400).Problem(t)
	}
	// A range before anything was collected is empty, not an error.
	rep.Result.List = nil
	e.do("GET", w+"/pages?date=20200101-20200131&timing=lcp", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &rep)
	if rep.Result.Count != 0 || len(rep.Result.List) != 0 {
		t.Errorf("an old range: %+v", rep.Result)
	}
}
