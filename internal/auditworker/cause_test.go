package auditworker_test

import (
	"context"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/demoshop"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// variantSite serves a small shop page at its URL and returns a function that injects one
// change into it, as a deploy would (the same URLs, other content): a larger hero image, a
// third-party script, a render-blocking stylesheet, a 300 ms long task, a late layout shift.
// The third party is a second server (localhost).
func variantSite(t testing.TB) (string, func(variant string)) {
	t.Helper()
	// Two heroes of the same size, of flat 20-pixel blocks and of pixel noise.
	hero := func(block int) []byte {
		b, err := demoshop.Hero(block)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	smallHero, largeHero := hero(20), hero(1)
	// 150 KB of script that keeps the main thread busy for 300 ms: well above what a loaded
	// machine adds to the page's own main-thread time between two loads.
	tag := "(function(){var e=Date.now()+300;while(Date.now()<e){}})();\n/*" + strings.Repeat("x", 150<<10) + "*/\n"
	third := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(tag))
	}))
	t.Cleanup(third.Close)
	_, thirdPort, _ := net.SplitHostPort(third.Listener.Addr().String())

	page := func(variant string) string {
		head, body := "", ""
		switch variant {
		case "third-party":
			body = `<script src="http://localhost:` + thirdPort + `/tag.js"></script>`
		case "blocking-css":
			head = `<link rel="stylesheet" href="/slow.css">`
		case "long-task":
			body = `<script src="/busy.js"></script>`
		case "late-shift":
			body = `<script src="/shift.js"></script>`
		}
		return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Variant shop</title>
<meta name="description" content="A page with one injected change."><link rel="stylesheet" href="/style.css">` + head + `</head>
<body><header><h1>Variant shop</h1></header><main id="content">
<img class="hero" src="/hero.png" width="600" height="400" alt="Hero">
<section id="products"><h2>Products</h2><p>` + strings.Repeat("Useful words about our products. ", 4) + `</p></section>
</main>` + body + `</body></html>`
	}
	var mu sync.Mutex
	current := ""
	variant := func() string { mu.Lock(); defer mu.Unlock(); return current }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page(variant())))
	})
	mux.HandleFunc("GET /hero.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		if variant() == "hero" {
			_, _ = w.Write(largeHero)
			return
		}
		_, _ = w.Write(smallHero)
	})
	serve := func(path, contentType string, body []byte, delay time.Duration) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(delay)
			w.Header().Set("Content-Type", contentType)
			_, _ = w.Write(body)
		})
	}
	serve("/style.css", "text/css", []byte("body{font-family:sans-serif;margin:0 auto;max-width:60em}img{max-width:100%;height:auto}"), 0)
	serve("/slow.css", "text/css", []byte("h1{color:#234}"), 800*time.Millisecond)
	serve("/busy.js", "text/javascript", []byte("(function(){var e=Date.now()+300;while(Date.now()<e){}})();"), 0)
	serve("/shift.js", "text/javascript", []byte(`setTimeout(function(){var d=document.createElement("div");d.id="promo";`+
		`d.style.height="300px";d.textContent="Late promotion";document.body.insertBefore(d,document.body.firstChild)},1000);`), 0)
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	return site.URL, func(v string) { mu.Lock(); defer mu.Unlock(); current = v }
}

// TestRegressionCause audits the shop page and each variant for real (Chromium, Lighthouse,
// desktop) and checks that the injected change tops the cause of the regression it makes, as
// the loads' diagnostics explain it. Then it plays the whole path for the larger hero: two
// weeks of results at the old level, three days at the new, the two audits' reports and
// diagnostics in the bucket; the watcher records the regression with
// that cause and its regression.detected event, and a redelivery records nothing more.
func TestRegressionCause(t *testing.T) {
	e := newBenchEnv(t)
	base, deploy := variantSite(t)
	// audit loads the page once and reads its diagnostics as the worker does (the report's
	// JSON is kept too, to be stored).
	audit := func() (*model.Diagnostics, []byte) {
		t.Helper()
		out := filepath.Join(e.temp, "cause.json")
		e.lighthouseRun(t, base+"/", lighthouse.DeviceDesktop, out)
		raw, res := decodeReport(t, out)
		har, phases := out+".har", out+".phases.json"
		if err := e.runner.Network(context.Background(), lighthouse.DevtoolsLogPath(out), har, phases); err != nil {
			t.Fatal(err)
		}
		var in lighthouse.DiagnosisInput
		var err error
		if in.Phases, err = os.ReadFile(phases); err != nil {
			t.Fatal(err)
		}
		in.Shifts, _ = os.ReadFile(lighthouse.ShiftsPath(out)) // absent: shifts without times
		in.Frames, _ = os.ReadFile(lighthouse.FramesPath(out))
		dg, err := res.Diagnose(in)
		if err != nil {
			t.Fatal(err)
		}
		return &dg.Diagnostics, raw
	}
	before, beforeRaw := audit()
	if len(before.Requests) < 3 || before.LCP == nil || before.LCP.ImageURL != base+"/hero.png" {
		t.Fatalf("base page diagnostics: LCP %+v, %d requests", before.LCP, len(before.Requests))
	}
	var heroRaw []byte
	var heroDiagnostics *model.Diagnostics
	for _, v := range []struct {
		variant, metric, kind, url string
	}{
		{"hero", "lcp", "lcp_resource", "/hero.png"},
		{"third-party", "tbt", "", "/tag.js"},
		{"blocking-css", "fcp", "render_blocking_added", "/slow.css"},
		{"long-task", "tbt", "", "/busy.js"},
		{"late-shift", "cls", "layout_shift", ""},
	} {
		t.Run(v.variant, func(t *testing.T) {
			// The base page again, just before: the machine's load drifts, and a change is
			// judged against the load next to it.
			before, _ := audit()
			deploy(v.variant)
			defer deploy("")
			after, raw := audit()
			if v.variant == "hero" {
				heroRaw, heroDiagnostics = raw, after
			}
			cause := regression.ExplainLoads(before, after, lighthouse.DeviceDesktop, v.metric, nil)
			for i, c := range cause {
				t.Logf("%s %d: %s %s %s impact %v", v.metric, i+1, c.Kind, c.Title, c.URL, c.Impact)
			}
			if len(cause) == 0 {
				t.Fatalf("no cause for %s", v.metric)
			}
			top := cause[0]
			if (v.kind != "" && top.Kind != v.kind) || !strings.HasSuffix(top.URL, v.url) || top.Impact <= 0 {
				t.Fatalf("top of the cause of %s is %+v, want the injected change (%s %s)", v.metric, top, v.kind, v.url)
			}
		})
	}
	if heroRaw == nil {
		t.Fatal("the hero variant did not run")
	}

	// The whole path, on stored results, reports and diagnostics.
	ctx := context.Background()
	site, page := e.site, e.page
	put := func(day string, raw []byte, d *model.Diagnostics) string {
		key := artifact.PageReportKey(site.Account, site.ID, page.ID, day, "desktop")
		if err := artifact.New(e.objects).Put(ctx, key, artifact.Output{Report: raw, Diagnostics: d}); err != nil {
			t.Fatal(err)
		}
		return key
	}
	start := time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewSource(5))
	for i := range 17 {
		day := model.Day(start.AddDate(0, 0, i))
		level, raw, d := 900.0, beforeRaw, before
		if i >= 14 {
			level, raw, d = 1500, heroRaw, heroDiagnostics
		}
		samples := []float64{level * (1 + 0.02*rnd.NormFloat64()), level * (1 + 0.02*rnd.NormFloat64()), level * (1 + 0.02*rnd.NormFloat64())}
		res := model.LabResult{Device: "desktop", Day: day, Audited: start.AddDate(0, 0, i), Runs: 3,
			Metrics: map[string]float64{"lcp": samples[0]}, Samples: map[string][]float64{"lcp": samples}}
		if i >= 13 {
			res.ReportKey = put(day, raw, d)
		}
		if err := e.store.PutLabResult(ctx, site, page, res); err != nil {
			t.Fatal(err)
		}
	}
	notifications := awstest.Queue(t, awstest.Clients(t), service.NotifyQueueSettings)
	// The incident's detection queued at once, not after notify.IncidentGather.
	q := notify.NewQueue(notifications)
	q.SetGather(0)
	watcher := regression.NewWatcher(e.store, artifact.New(e.objects), event.NewRecorder(e.store, q, awstest.Log(t)), awstest.Log(t))
	watcher.SetClock(func() time.Time { return start.AddDate(0, 0, 16) })
	for range 2 { // the second evaluation is a redelivered message: nothing new
		if err := watcher.Lab(ctx, site, page, "desktop"); err != nil {
			t.Fatal(err)
		}
	}
	regs, _, err := e.store.Regressions(ctx, site, model.RegressionFilter{Metric: "lcp"}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 1 {
		t.Fatalf("regressions %+v, want one of lcp", regs)
	}
	r := regs[0]
	if r.Kind != model.KindRegression || r.FirstBad != "20261115" || r.LastGood != "20261114" || r.Percent < 50 || len(r.Cause) == 0 ||
		r.Cause[0].Kind != "lcp_resource" || !strings.HasSuffix(r.Cause[0].URL, "/hero.png") {
		t.Fatalf("regression %+v", r)
	}
	evs, _, err := e.store.Events(ctx, site, model.EventFilter{}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].Type != event.RegressionDetected || evs[0].Regression != r.ID || evs[0].Metric != "lcp" || evs[0].Incident != r.Incident {
		t.Fatalf("events %+v, want one regression.detected", evs)
	}
	if bodies := awstest.Receive(t, notifications, 1); len(bodies) != 1 || !strings.Contains(bodies[0], evs[0].ID) {
		t.Fatalf("notification messages %v, want the event's one", bodies)
	}
}
