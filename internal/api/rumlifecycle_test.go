package api_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// lifecycleBeacon is a beacon of the snippet with soft navigations: a page lifecycle's views.
func lifecycleBeacon(site string, views ...string) string {
	return fmt.Sprintf(`{"w":%q,"c":{"cart_items":1},"v":[%s]}`, site, strings.Join(views, ","))
}

func lifecycleView(id, url, nav string, lcp float64) string {
	return fmt.Sprintf(`{"i":%q,"u":%q,"m":{"lcp":%v,"inp":120},"s":{"n":%q},"a":{"lcp":{"e":"#hero","p":[0,0,0,%v]}}}`, id, url, lcp, nav, lcp)
}

// A lifecycle's beacon queues each of its views with the ID the snippet made, its URL's page
// and its navigation (soft for a route change); a beacon of the snippet before soft
// navigations is still one view, navigate by default.
func TestCollectQueuesALifecyclesViews(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	e.beacon(lifecycleBeacon(site.ID,
		lifecycleView("6b08cab1302953bc8761ffc6", "https://example.com/", "navigate", 900),
		lifecycleView("6B08CAB358A2E396D4064083", "https://example.com/product/123?ref=x", "soft", 200),
		lifecycleView("not-an-id", "https://example.com/about", "soft-navigation", 150),
		// Left out: off the domain, or nothing measured.
		lifecycleView("6b08cab5b7a5b9b63670afb8", "https://evil.example.net/", "soft", 100),
		`{"i":"6b08cab5b7a5b9b63670afb9","u":"https://example.com/empty","m":{},"s":{"n":"soft"}}`,
	), "text/plain", "8.8.8.8:1", nil).Want(t, 202)
	e.beacon(fmt.Sprintf(`{"w":%q,"u":"https://example.com/old","m":{"lcp":1000},"s":{"n":"navigate"}}`, site.ID), "text/plain", "8.8.8.8:1", nil).Want(t, 202)
	var views []rum.View
	for _, m := range awstestReceive(t, e, 2) {
		views = append(views, m.Views...)
	}
	if len(views) != 4 {
		t.Fatalf("%d views queued, want 4: %+v", len(views), views)
	}
	want := []struct{ id, page, nav string }{
		{"6b08cab1302953bc8761ffc6", "/", "navigate"},
		{"6b08cab358a2e396d4064083", "/product/123", "soft"},
		{"", "/about", "soft"},
		{"", "/old", "navigate"},
	}
	for i, w := range want {
		v := views[i]
		nav := rum.DimNavigation.Values()[rum.DimNavigation.Of(v.Segments)]
		if v.Page != w.page || nav != w.nav || (w.id != "" && v.ID != w.id) || v.ID == "" || (i < 3 && v.Metrics["cart_items"] != 1) {
			t.Errorf("view %d: %s %s id %q %v, want %s %s id %q", i, v.Page, nav, v.ID, v.Metrics, w.page, w.nav, w.id)
		}
	}
	if views[2].ID == "not-an-id" {
		t.Error("a malformed view ID was kept")
	}
}

// A beacon sent twice (sendBeacon refused, then fetch; or a network retry) counts its views
// once: the snippet's view IDs reach the fold, which drops a view it has folded.
func TestCollectRetriedBeaconCountsOnce(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	body := lifecycleBeacon(site.ID,
		lifecycleView("6b08cab1302953bc8761ffc6", "https://example.com/", "navigate", 900),
		lifecycleView("6b08cab358a2e396d4064083", "https://example.com/products", "soft", 200),
		lifecycleView("6b08cab5b7a5b9b63670afb8", "https://example.com/about", "soft", 150))
	e.beacon(body, "text/plain", "8.8.8.8:1", nil).Want(t, 202)
	e.beacon(body, "text/plain", "8.8.8.8:1", nil).Want(t, 202)
	e.fold(6)
	var rep struct {
		Result struct {
			Count int                           `json:"count"`
			List  map[string]map[string]float64 `json:"list"`
		} `json:"result"`
	}
	e.do("GET", "/"+site.ID+"/field-testing/pages?timing=lcp", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &rep)
	if rep.Result.Count != 3 || rep.Result.List["/"]["count"] != 1 || rep.Result.List["/products"]["count"] != 1 || rep.Result.List["/about"]["count"] != 1 {
		t.Errorf("a beacon sent twice: %+v, want each of its 3 views once", rep.Result)
	}
}

// A beacon holds at most 32 views and 16 KB: the snippet splits a longer lifecycle.
func TestCollectBeaconLimits(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	var views []string
	for i := range rum.MaxViewsPerBeacon + 1 {
		views = append(views, lifecycleView(fmt.Sprintf("6b08cab1302953bc8761%04x", i), fmt.Sprintf("https://example.com/r/%d", i), "soft", 100))
	}
	e.beacon(lifecycleBeacon(site.ID, views...), "text/plain", "8.8.8.8:1", nil).Want(t, 400).Problem(t)
	full := lifecycleBeacon(site.ID, views[:rum.MaxViewsPerBeacon]...)
	if len(full) > rum.MaxBeaconBytes {
		t.Fatalf("32 small views take %d bytes", len(full))
	}
	e.beacon(full, "text/plain", "8.8.8.8:1", nil).Want(t, 202)
	big := strings.Repeat("a", 1500)
	views = views[:0]
	for i := range 12 {
		views = append(views, lifecycleView(fmt.Sprintf("6b08cab1302953bc8762%04x", i), "https://example.com/"+big, "soft", 100))
	}
	e.beacon(lifecycleBeacon(site.ID, views...), "text/plain", "8.8.8.8:1", nil).Want(t, 413).Problem(t)
	e.beacon(lifecycleBeacon(site.ID), "text/plain", "8.8.8.8:1", nil).Want(t, 400).Problem(t)
	if got := awstestReceive(t, e, 1); len(got) != 1 || len(got[0].Views) != rum.MaxViewsPerBeacon {
		t.Errorf("queued %d messages, want the 32 views of the one beacon taken", len(got))
	}
}

// awstestReceive reads n messages of the beacon queue as batches.
func awstestReceive(t *testing.T, e *testEnv, n int) []rum.Batch {
	t.Helper()
	var out []rum.Batch
	for _, m := range awstest.Receive(t, e.rum, n) {
		var b rum.Batch
		if err := json.Unmarshal([]byte(m), &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}
