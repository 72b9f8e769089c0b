package dashboardtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/localtest"
)

// TestDashboardIncidents: in real Chromium, an admin sees one change of a page on two metrics
// and both devices as one incident (its four regressions inside, a chart, its cause and the
// link to the comparison of its last good and first bad day), an improvement without "open",
// and acknowledges two incidents in one go; then adds a webhook channel with the form, sends
// it a test that a local receiver gets, changes and deletes it. Screenshots at 1280 and 390
// pixels wide.
func TestDashboardIncidents(t *testing.T) {
	d, shop := startShop(t)
	ctx := context.Background()
	site, home, cart, now, day := shop.site, shop.home, shop.cart, shop.now, shop.day
	change := model.IncidentID(site, "page:"+home.ID, model.KindRegression, day(3))
	// The change of the home page, as the watcher stores it: LCP and TBT on both devices.
	levels := map[string][2]float64{"lcp": {1800, 2700}, "tbt": {120, 420}}
	var regs []model.Regression
	for _, device := range []string{"desktop", "mobile"} {
		for metric, lv := range levels {
			if device == "mobile" {
				lv = [2]float64{lv[0] * 1.6, lv[1] * 1.6}
			}
			r := shop.labRegression("lab"+device+metric, home, device, metric, 3, lv[0], lv[1])
			r.Incident = change
			for back := 17; back >= 0; back-- {
				v := lv[0]
				if back <= 3 {
					v = lv[1]
				}
				r.Days = append(r.Days, model.DayValue{Day: day(back), Value: v * (1 + 0.03*float64(back%3-1))})
			}
			if metric == "lcp" {
				r.Cause = []model.CauseItem{{Kind: "lcp_resource", Title: "The LCP image grew", URL: "https://shop.example/hero.jpg", Before: 120, After: 940, Unit: "KiB", Impact: 700}}
			}
			regs = append(regs, r)
		}
	}
	cartSlow := model.Regression{ID: model.RegressionID(site, "labcartcls", day(6)), Kind: model.KindRegression, Source: "lab", Page: cart.ID,
		Device: "mobile", Metric: "cls", LastGood: day(7), FirstBad: day(6), Before: model.Level{Median: 0.02}, After: model.Level{Median: 0.21},
		Delta: 0.19, Percent: 950, P: 0.0001, Status: model.RegressionOpen, Detected: now}
	better := model.Regression{ID: model.RegressionID(site, "uxcartttfb", day(9)), Kind: model.KindImprovement, Source: "ux", Page: cart.ID,
		Device: "desktop", Metric: "ttfb", LastGood: day(10), FirstBad: day(9), Before: model.Level{Median: 900}, After: model.Level{Median: 500},
		Delta: -400, Percent: -44.4, P: 0.0001, Status: model.RegressionOpen, Detected: now}
	for _, r := range append(regs, cartSlow, better) {
		if _, err := d.Store.PutRegression(ctx, site, r); err != nil {
			t.Fatal(err)
		}
	}
	type incident struct {
		ID, Kind, State string
		Metrics         []string
		Compare         *struct{ Page, Device, Base, Target string }
		Regressions     []struct {
			Metric, Device, Unit string
			Before, After        struct{ Median float64 }
			ChangePercent        float64
		}
	}
	var incidents struct{ Result struct{ List []incident } }
	d.Call(t, "GET", "/"+site.ID+"/incidents", localtest.AdminKey, "", 200, &incidents)
	if l := incidents.Result.List; len(l) != 3 || l[0].ID != change {
		t.Fatalf("incidents %+v, want the home page's change, the cart's CLS and its improvement", l)
	}

	b := launchBrowser(t)
	shots := screenshotDir(t)
	W := "#/w/" + site.ID
	tb := d.signedIn(t, b, localtest.AdminKey)

	t.Run("incidents", func(t *testing.T) {
		tb.t = t
		tb.view(W + "/regressions")
		if n := tb.eval(`() => document.querySelectorAll('ul.incidents > li').length`).(float64); n != 3 {
			t.Fatalf("%v incidents shown, want 3 (the four regressions of one change are one)", n)
		}
		item := "#incident-" + change
		text := tb.text(item)
		for _, want := range []string{"Regression of Home", "desktop, mobile", "What changed", "The LCP image grew", "Compare " + model.DayToISO(day(4)) + " with " + model.DayToISO(day(3))} {
			if !strings.Contains(text, want) {
				t.Errorf("the change's item %q lacks %q", text, want)
			}
		}
		if n := tb.eval(`s => document.querySelectorAll(s + ' tbody tr').length`, item).(float64); n != 4 {
			t.Errorf("the change's item lists %v regressions, want 4", n)
		}
		// Its CSV holds the API's numbers, not the text on screen, each row's unit in a column.
		csvText := tb.eval(`s => document.querySelector(s + ' .tablebox').csv()`, item).(string)
		var want []string
		for _, g := range incidents.Result.List[0].Regressions {
			want = append(want, fmt.Sprintf("%s,%s,%v,%v,%s,%v", g.Device, "lab (Lighthouse)", g.Before.Median, g.After.Median, g.Unit, g.ChangePercent))
		}
		if !strings.HasPrefix(csvText, "Metric,Device,Source,Before,After,Unit,Change (%),Status\r\n") || len(want) != 4 {
			t.Errorf("the incident's CSV %q: want its header with a unit column, and 4 rows", csvText)
		}
		for _, w := range want {
			if !strings.Contains(csvText, ","+w+",") {
				t.Errorf("the incident's CSV %q has no row %q of the API's numbers", csvText, w)
			}
		}
		if n := tb.eval(`s => document.querySelectorAll(s + ' svg.incident-chart polyline').length`, item).(float64); n != 1 {
			t.Errorf("the change's item has %v charts, want 1", n)
		}
		href := tb.eval(`s => document.querySelector(s + ' a[href*="/compare?"]').getAttribute('href')`, item).(string)
		c := incidents.Result.List[0].Compare
		if want := W + "/compare?page=" + c.Page + "&device=" + c.Device + "&base=" + c.Base + "&target=" + c.Target; href != want {
			t.Errorf("comparison link %q, want %q", href, want)
		}
		var improvement string
		for _, in := range incidents.Result.List {
			if in.Kind == model.KindImprovement {
				improvement = "#incident-" + in.ID
			}
		}
		if badges := tb.eval(`s => [...document.querySelectorAll(s + ' .badge')].map(b => b.textContent).join(' ')`, improvement).(string); strings.Contains(badges, "open") || !strings.Contains(badges, "improvement") {
			t.Errorf("the improvement's badges %q: want improvement, never open", badges)
		}
		if n := tb.eval(`s => document.querySelectorAll(s + ' input.pick').length`, improvement).(float64); n != 0 {
			t.Error("an improvement can be selected for acknowledgement")
		}
		tb.screenshot(shots, "incidents")
		tb.narrow(shots, "incidents", "")

		// Bulk: both open incidents selected, one request.
		tb.eval(`() => document.querySelectorAll('ul.incidents input.pick').forEach(c => c.click())`)
		tb.click("#ack-selected", "Acknowledge 2 selected")
		tb.waitFor("the incidents acknowledged", `() => document.querySelectorAll('ul.incidents input.pick').length === 0 && document.querySelectorAll('ul.incidents > li').length === 3`)
		var open struct{ Result struct{ List []incident } }
		d.Call(t, "GET", "/"+site.ID+"/incidents?state=open", localtest.AdminKey, "", 200, &open)
		var acked struct{ Result struct{ List []incident } }
		d.Call(t, "GET", "/"+site.ID+"/incidents?state=acknowledged", localtest.AdminKey, "", 200, &acked)
		if len(open.Result.List) != 0 || len(acked.Result.List) != 2 {
			t.Fatalf("after the bulk acknowledgement: %d open, %d acknowledged; want 0 and 2", len(open.Result.List), len(acked.Result.List))
		}
		// A link to one incident shows it alone.
		tb.view(W + "/regressions?incident=" + change)
		if n := tb.eval(`() => document.querySelectorAll('ul.incidents > li').length`).(float64); n != 1 || !strings.Contains(tb.text(".incident"), "acknowledged") {
			t.Errorf("the incident's link shows %v items", n)
		}
	})

	t.Run("events link to their incident", func(t *testing.T) {
		tb.t = t
		// The incident's event, as the watcher records it.
		key := store.PageState(home.ID, "incident#"+change)
		from, err := d.Store.WatchedState(ctx, site, key)
		if err != nil {
			t.Fatal(err)
		}
		ev := &model.Event{Type: "regression.detected", Page: home.ID, Incident: change, Occurred: now, Before: "ok", After: "regressed",
			Summary: "Regression of Home (/) from " + model.DayToISO(day(3)) + ": LCP 1,800 → 2,700 ms (+50 %, desktop)"}
		if _, err := d.Store.ChangeState(ctx, site, from, "open", "", ev); err != nil {
			t.Fatal(err)
		}
		tb.view(W + "/events")
		if !strings.Contains(tb.text("main table"), ev.Summary) {
			t.Fatalf("the events table %q lacks the incident's event", tb.text("main table"))
		}
		tb.click("main table a", "incident")
		tb.waitFor("the incident alone", `() => location.hash.includes('incident=`+change+`') && document.querySelectorAll('ul.incidents > li').length === 1`)
	})

	t.Run("channels", func(t *testing.T) {
		tb.t = t
		hook := newHookReceiver(t)
		tb.view(W + "/events")
		if !strings.Contains(tb.text("main"), "No channel") {
			t.Error("no empty state before the first channel")
		}
		tb.click(".add-channel > summary", "Add a channel")
		tb.fill(`form[aria-label="Add a channel"] input[name="name"]`, "Ops hook")
		tb.fill(`form[aria-label="Add a channel"] input[name="url"]`, hook.srv.URL+"/openvitals")
		tb.eval(`() => document.querySelector('form[aria-label="Add a channel"] input[value="regression.detected"]').click()`)
		tb.click(`form[aria-label="Add a channel"] button[type="submit"]`, "Add channel")
		tb.waitFor("the signing secret shown once", `() => /whsec_/.test((document.querySelector('.secret') || {}).textContent || '')`)
		tb.screenshot(shots, "channel-added")
		tb.click(".secret button", "Done")
		tb.waitFor("the channel listed", `() => document.querySelectorAll('.card.channel').length === 1`)
		var channels struct {
			Result struct {
				List []struct {
					ID, Name, Status string
					Events           []string
				}
			}
		}
		d.Call(t, "GET", "/"+site.ID+"/channels", localtest.AdminKey, "", 200, &channels)
		l := channels.Result.List
		if len(l) != 1 || l[0].Name != "Ops hook" || len(l[0].Events) != 1 || l[0].Events[0] != "regression.detected" || l[0].Status != "active" {
			t.Fatalf("channels %+v, want the one added with the form", l)
		}
		id := l[0].ID
		tb.click("#channel-"+id+" button", "Send a test")
		got := hook.wait(t, 60*time.Second)
		var doc struct{ Type, Summary string }
		if err := json.Unmarshal(got.body, &doc); err != nil || doc.Type != "channel.test" || got.header.Get("webhook-signature") == "" {
			t.Fatalf("the receiver got %s (%v), signature %q: want the signed test", got.body, err, got.header.Get("webhook-signature"))
		}
		// Its delivery, once recorded, shows in the channel.
		deadline := time.Now().Add(30 * time.Second)
		for {
			var ds struct {
				Result struct{ List []struct{ StatusCode int } }
			}
			d.Call(t, "GET", "/"+site.ID+"/channels/"+id+"/deliveries", localtest.AdminKey, "", 200, &ds)
			if len(ds.Result.List) == 1 && ds.Result.List[0].StatusCode == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("deliveries %+v, want the test's", ds.Result.List)
			}
			time.Sleep(200 * time.Millisecond)
		}
		tb.view(W + "/events?channel=" + id)
		tb.waitFor("the delivery listed", `() => /channel\.test/.test(document.querySelector('.card.channel').textContent)`)
		tb.screenshot(shots, "channels")
		tb.narrow(shots, "channels", "")

		// Changed with its form: the name and every event.
		tb.click("#channel-"+id+" .edit > summary", "Change")
		form := `#channel-` + id + ` form`
		tb.eval(`s => { const i = document.querySelector(s + ' input[name="name"]'); i.value = ''; }`, form)
		tb.fill(form+` input[name="name"]`, "Ops webhook")
		tb.eval(`s => document.querySelector(s + ' input[value="regression.detected"]').click()`, form)
		tb.click(form+` button[type="submit"]`, "Save")
		tb.waitFor("the channel renamed", `() => /Ops webhook/.test(document.querySelector('.card.channel summary').textContent)`)
		d.Call(t, "GET", "/"+site.ID+"/channels", localtest.AdminKey, "", 200, &channels)
		if l := channels.Result.List; len(l) != 1 || l[0].Name != "Ops webhook" || len(l[0].Events) != 0 {
			t.Fatalf("channels %+v, want it renamed, taking every event", l)
		}
		// Deleted, after confirming.
		tb.eval(`() => { window.confirm = () => true; }`)
		tb.click("#channel-"+id+" button", "Delete")
		tb.waitFor("the channel gone", `() => document.querySelectorAll('.card.channel').length === 0`)
		d.Call(t, "GET", "/"+site.ID+"/channels", localtest.AdminKey, "", 200, &channels)
		if len(channels.Result.List) != 0 {
			t.Fatalf("channels %+v after deleting it", channels.Result.List)
		}
	})
}

// hookReceiver is a local webhook endpoint that keeps what it is sent.
type hookReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []hookRequest
}

type hookRequest struct {
	header http.Header
	body   []byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.got = append(h.got, hookRequest{r.Header.Clone(), body})
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// wait returns the first request, waiting for it up to limit.
func (h *hookReceiver) wait(t *testing.T, limit time.Duration) hookRequest {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		h.mu.Lock()
		if len(h.got) > 0 {
			r := h.got[0]
			h.mu.Unlock()
			return r
		}
		h.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("the receiver got nothing in %s", limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// shopDays is the shop website (dashboard.shop) with the days counted back from now, for the
// tests that store regressions as the watcher does.
type shopDays struct {
	site       model.Website
	home, cart model.Page
	now        time.Time
}

// startShop starts the local service (one Lighthouse run an audit) with the shop website
// stored in it, its days counted back from now.
func startShop(t testing.TB) (*dashboard, shopDays) {
	t.Helper()
	d := startService(t, 1, false)
	site, home, cart := d.shop(t)
	return d, shopDays{site: site, home: home, cart: cart, now: time.Now().UTC()}
}

// day is the day back days before now.
func (s shopDays) day(back int) string { return model.Day(s.now.AddDate(0, 0, -back)) }

// labRegression is an open lab regression of page's metric on device, as the watcher stores it
// for its series: from before to after (medians) back days ago, the day after its last good
// one. Its days and incident are the caller's.
func (s shopDays) labRegression(series string, page model.Page, device, metric string, back int, before, after float64) model.Regression {
	return model.Regression{ID: model.RegressionID(s.site, series, s.day(back)), Kind: model.KindRegression, Source: "lab", Page: page.ID,
		Device: device, Metric: metric, LastGood: s.day(back + 1), FirstBad: s.day(back), Before: model.Level{Median: before}, After: model.Level{Median: after},
		Delta: after - before, Percent: 100 * (after - before) / before, P: 0.0001, Status: model.RegressionOpen, Detected: s.now}
}
