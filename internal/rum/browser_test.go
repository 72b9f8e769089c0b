package rum_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rollup"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

const fixturePage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>RUM fixture</title>
<script async src="%s/rum/%s.js"></script>
</head><body>
<h1>Real users</h1>
<p>A page with the openvitals snippet, a slow button and a late shift.</p>
<div id="slot"></div>
<button id="work" style="font-size:32px">Work</button>
<script>
(window.openvitals = window.openvitals || []).push(["set", "cart_items", 3]);
document.getElementById("work").addEventListener("click", function () {
  var end = performance.now() + 180;
  while (performance.now() < end) {}
  document.getElementById("slot").textContent = "done";
});
setTimeout(function () {
  var banner = document.createElement("div");
  banner.style.height = "120px";
  banner.textContent = "late banner";
  document.body.insertBefore(banner, document.body.firstChild);
}, 300);
</script>
</body></html>`

// A real Chromium loads a page with the snippet from the service, is clicked and navigates
// away; its one beacon goes through collect, the FIFO queue and the aggregator, and the report
// shows the page once with the values the browser measured.
func TestBrowserBeaconReachesTheReport(t *testing.T) {
	bin, err := browser.LookBin()
	if err != nil {
		t.Fatal(err)
	}
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	q := awstest.FIFOQueue(t, clients, service.RUMQueueSettings)
	const key = "acme-admin-key-rum-browser-0001"
	apitest.Provision(t, st, apikey.Grant{Account: "acme", Role: model.RoleAdmin, Key: key})
	log := awstest.Log(t)
	rums := awstest.RUM(t, st)
	handler := api.New(api.Deps{Store: st, Log: log, Beacons: rum.NewCollector(q), Field: rum.NewReader(rums), RUM: rums}).Handler()

	// The service, recording the beacons it is sent.
	beacons := make(chan []byte, 4)
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && r.URL.Path == "/collect" {
			body, _ := io.ReadAll(r.Body)
			beacons <- body
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		handler.ServeHTTP(w, r)
	}))
	defer svc.Close()
	fixture := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, fixturePage, svc.URL, r.URL.Query().Get("site"))
	}))
	defer fixture.Close()
	site, _ := awstest.Website(t, st, model.Website{Account: "acme", Domain: strings.TrimPrefix(fixture.URL, "http://"), DisplayName: "fixture"}, nil)

	temp, err := os.MkdirTemp("", "ovr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(temp)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sess, err := browser.Launch(ctx, browser.Options{Bin: bin, Guard: browser.Guard{AllowPrivate: true}, TempRoot: temp, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	page, err := sess.Browser().Context(ctx).Page(proto.TargetCreateTarget{URL: "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	if err := page.Navigate(fixture.URL + "/Shop/RUM-Fixture/?site=" + site.ID + "#x"); err != nil {
		t.Fatal(err)
	}
	if err := page.WaitLoad(); err != nil {
		t.Fatal(err)
	}
	if err := page.Timeout(20 * time.Second).Wait(rod.Eval(`() => !!(window.webVitals && window.openvitals && !Array.isArray(window.openvitals))`)); err != nil {
		t.Fatalf("the snippet did not load: %v", err)
	}
	time.Sleep(600 * time.Millisecond) // past the late banner
	btn, err := page.Element("#work")
	if err != nil {
		t.Fatal(err)
	}
	if err := btn.Click(proto.InputMouseButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	// web-vitals processes interactions in an idle callback with a 1 s timeout; one still
	// pending when the page is hidden is not reported (web-vitals' own behaviour).
	time.Sleep(1500 * time.Millisecond)
	measured, err := page.Eval(`() => {
		const nav = performance.getEntriesByType("navigation")[0];
		const fcp = performance.getEntriesByName("first-contentful-paint")[0];
		return {fcp: fcp.startTime, ttfb: nav.responseStart - (nav.activationStart || 0),
			dom_elements: document.getElementsByTagName("*").length};
	}`)
	if err != nil {
		t.Fatal(err)
	}
	var browserSaw map[string]float64
	if err := measured.Value.Unmarshal(&browserSaw); err != nil {
		t.Fatal(err)
	}
	// Leaving the page hides it: the snippet sends its beacon.
	if err := page.Navigate("about:blank"); err != nil {
		t.Fatal(err)
	}

	var sent rum.Beacon
	select {
	case body := <-beacons:
		views, err := rum.ParseBeacons(body)
		if err != nil || len(views) != 1 {
			t.Fatalf("beacon %s: %v, want one view", body, err)
		}
		sent = views[0]
		t.Logf("beacon: %s", body)
	case <-time.After(15 * time.Second):
		t.Fatal("no beacon within 15 s of leaving the page")
	}
	select {
	case body := <-beacons:
		t.Errorf("a second beacon for one page view: %s", body)
	case <-time.After(time.Second):
	}
	for _, m := range []string{"lcp", "fcp", "ttfb", "inp", "cls", "fp", "dns_time", "server_time", "dom_elements", "fully_loaded_time"} {
		if _, ok := sent.Metrics[m]; !ok {
			t.Errorf("the beacon has no %s", m)
		}
	}
	if sent.Metrics["inp"] < 180 || sent.Metrics["cls"] <= 0 || sent.Custom["cart_items"] != 3 {
		t.Errorf("inp %v (a 180 ms click), cls %v (a late banner), cart_items %v", sent.Metrics["inp"], sent.Metrics["cls"], sent.Custom["cart_items"])
	}
	for _, m := range []string{"fcp", "ttfb", "dom_elements"} {
		if math.Abs(sent.Metrics[m]-browserSaw[m]) > 1 {
			t.Errorf("%s: the beacon says %v, the browser measured %v", m, sent.Metrics[m], browserSaw[m])
		}
	}

	agg := rumworker.NewAggregatorWith(st, rums, quota.NewKeeper(st, time.Now), log, geo.Country)
	var mu sync.Mutex
	folded := 0
	awstest.Drain(t, q, 10, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		resp, err := agg.HandleSQS(ctx, ev)
		mu.Lock()
		folded += len(ev.Records) - len(resp.BatchItemFailures)
		mu.Unlock()
		return resp, err
	}, func(int) bool { mu.Lock(); defer mu.Unlock(); return folded >= 1 })

	req, _ := http.NewRequest("GET", svc.URL+"/"+site.ID+"/field-testing/pages?timing=lcp+fcp+ttfb+inp+cls+dom_elements+cart_items", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var rep struct {
		Result struct {
			Count int                           `json:"count"`
			List  map[string]map[string]float64 `json:"list"`
		} `json:"result"`
	}
	if err := json.NewDecoder(res.Body).Decode(&rep); err != nil || res.StatusCode != 200 {
		t.Fatalf("report: %d %v", res.StatusCode, err)
	}
	item, ok := rep.Result.List["/shop/rum-fixture"]
	if !ok || len(rep.Result.List) != 1 || item["count"] != 1 || rep.Result.Count != 1 {
		t.Fatalf("report %+v: want /shop/rum-fixture once", rep.Result)
	}
	for _, m := range []string{"lcp", "fcp", "ttfb", "inp", "cls", "dom_elements", "cart_items"} {
		want := sent.Metrics[m]
		if m == "cart_items" {
			want = sent.Custom[m]
		}
		// Within the sketch's 1 %, then rounded as reported (ms to integers, cls to 3 decimals).
		if got := item[m]; math.Abs(got-want) > want*rollup.RelativeAccuracy+0.5 {
			t.Errorf("%s: report %v, beacon %v", m, got, want)
		}
	}
	if got, want := item["fcp"], browserSaw["fcp"]; math.Abs(got-want) > want*rollup.RelativeAccuracy+1 {
		t.Errorf("fcp: report %v, the browser measured %v", got, want)
	}
}
