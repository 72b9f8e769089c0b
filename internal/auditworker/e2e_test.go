package auditworker_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"golang.org/x/net/html"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/deliver"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/notifyworker"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/browsertest"
)

// fixtureSite serves testdata/site on 127.0.0.1, with a generated hero image, and a script on
// a second host (localhost) for third-party bytes. It returns the site's host:port and the
// hero image's size.
func fixtureSite(t testing.TB) (string, int) {
	t.Helper()
	third := httptest.NewServer(http.FileServer(http.Dir("testdata/site")))
	t.Cleanup(third.Close)
	_, thirdPort, _ := net.SplitHostPort(third.Listener.Addr().String())

	// A noisy image compresses badly, so its bytes are certain: the page's largest download.
	img := image.NewRGBA(image.Rect(0, 0, 600, 400))
	rnd := rand.New(rand.NewSource(1))
	for i := range img.Pix {
		img.Pix[i] = byte(rnd.Intn(256))
	}
	for x := 0; x < 600; x++ {
		img.Set(x, 0, color.RGBA{A: 255})
	}
	var hero bytes.Buffer
	if err := png.Encode(&hero, img); err != nil {
		t.Fatal(err)
	}
	page := template.Must(template.ParseFiles("testdata/site/index.html"))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = page.Execute(w, map[string]string{"ThirdParty": "http://localhost:" + thirdPort})
	})
	mux.HandleFunc("GET /hero.png", func(w http.ResponseWriter, r *http.Request) {
		// With its length, as a server sends a static image: Chromium leaves a large image
		// sent without one (chunked) out of the LCP in some loads (BENCHMARKS.md).
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", strconv.Itoa(hero.Len()))
		_, _ = w.Write(hero.Bytes())
	})
	mux.Handle("GET /", http.FileServer(http.Dir("testdata/site")))
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	return site.Listener.Addr().String(), hero.Len()
}

type e2e struct {
	t       *testing.T
	clients awsclient.Clients
	api     apitest.Client // the API, called as acme's admin
	store   *store.Store
	objects *blobstore.Bucket
	queue   *queue.Queue
	purges  *queue.Queue
	notify  *queue.Queue
	keys    *seal.Keyring
	// events records what the workers' audits change.
	events *event.Recorder
	worker *auditworker.Worker
	runner *lighthouse.Runner
	temp   string
}

func newE2E(t *testing.T, allowPrivate bool) *e2e {
	t.Helper()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	// A short visibility timeout, so that a failing audit's retries come quickly.
	q := awstest.Queue(t, clients, queue.Settings{VisibilityTimeout: 2 * time.Second, MaxReceives: queue.MaxReceives})
	pq := awstest.Queue(t, clients, queue.Settings{VisibilityTimeout: 30 * time.Second, MaxReceives: 3})
	objects := awstest.Bucket(t)
	log := awstest.Log(t)
	apitest.Provision(t, st, apitest.Admin)
	runner := browsertest.Runner(t)
	opts := browsertest.Options(t, allowPrivate)
	nq := awstest.Queue(t, clients, service.NotifyQueueSettings)
	keys := seal.FixedKey(seal.GenerateKey())
	events := event.NewRecorder(st, notify.NewQueue(nq), log)
	worker := auditworker.NewWorker(auditworker.WorkerConfig{
		Runs: 1, Scheme: "http",
		Browser:     opts,
		Events:      events,
		Regressions: regression.NewWatcher(st, artifact.New(objects), events, log),
	}, st, objects, runner, log)
	srv := api.New(api.Deps{Store: st, Purger: purge.NewQueue(pq), Auditor: audit.NewQueue(st, q, log),
		Reports: objects, Log: log, AllowLocalTargets: true, Credentials: keys, Notifications: notify.NewQueue(nq)})
	return &e2e{t: t, clients: clients, api: apitest.Client{Handler: srv.Handler(), Key: apitest.AdminKey}, store: st, objects: objects, queue: q, purges: pq,
		notify: nq, keys: keys, events: events, worker: worker, runner: runner, temp: opts.TempRoot}
}

// pageDetail is what the tests read of a page's detail on a device.
type pageDetail struct {
	LatestMetrics map[string]*float64
	LastError     struct {
		Message  string
		Attempts int
		Final    bool
	}
	Measurement struct{ Method, Summary string }
	Profile     struct{ ID, Name string }
}

// pageDetail reads the detail of page of website on device through the API.
func (e *e2e) pageDetail(website, page, device string) pageDetail {
	e.t.Helper()
	var d pageDetail
	e.api.Call(e.t, "GET", "/"+website+"/pages/"+page+"?device="+device, "", 200, &d)
	return d
}

// work runs the audit worker on the queue, as the local service does, until jobs are done or
// failed.
func (e *e2e) work(jobs []audit.Job) queue.Progress {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.queue.Poll(ctx, 1, e.worker.HandleSQS, awstest.Log(e.t)); close(done) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Minute) // a bound for a stuck worker, not a speed check
	for time.Now().Before(deadline) {
		p, err := audit.Track(ctx, e.store, jobs)
		if err != nil {
			e.t.Fatal(err)
		}
		if p.Remaining == 0 && p.Retrying == 0 {
			return p
		}
		time.Sleep(500 * time.Millisecond)
	}
	e.t.Fatal("audits not finished after 10 minutes")
	return queue.Progress{}
}

// notifyAll runs the notifier on what the notification queue holds.
func (e *e2e) notifyAll() {
	e.t.Helper()
	sender := deliver.NewSender(browser.Guard{AllowPrivate: true}, nil, "", "http://127.0.0.1:8080", "")
	n := notifyworker.NewWorker(e.store, e.keys, sender, notify.NewQueue(e.notify), awstest.Log(e.t))
	deadline := time.Now().Add(2 * time.Second)
	awstest.Drain(e.t, e.notify, 10, n.HandleSQS, func(int) bool { return time.Now().After(deadline) })
}

// hookReceiver is a webhook endpoint on loopback that records each request.
type hookReceiver struct {
	URL      string
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
}

func newHookReceiver(t *testing.T) *hookReceiver {
	h := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.requests, h.bodies = append(h.requests, r), append(h.bodies, body)
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// verified returns the webhook-id of each request, failing the test for any whose signature
// does not verify per the Standard Webhooks specification (HMAC-SHA256 over id.timestamp.body,
// keyed with the base64 after whsec_), checked here without the notifier's library.
func (h *hookReceiver) verified(t *testing.T, secret string) []string {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, r := range h.requests {
		id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + ts + "." + string(h.bodies[i])))
		if r.Header.Get("webhook-signature") != "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)) {
			t.Errorf("request %d: signature %q does not verify", i, r.Header.Get("webhook-signature"))
		}
		ids = append(ids, id)
	}
	return ids
}

// checkNothingLeft fails if a temp directory or a Chromium process of the worker remains.
func (e *e2e) checkNothingLeft() {
	e.t.Helper()
	entries, err := os.ReadDir(e.temp)
	if err != nil {
		e.t.Fatal(err)
	}
	for _, d := range entries {
		e.t.Errorf("left behind in the worker's temp dir: %s", d.Name())
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err == nil && bytes.Contains(cmd, []byte(e.temp)) {
			e.t.Errorf("a process outlived its audit: %s", bytes.ReplaceAll(cmd, []byte{0}, []byte{' '}))
		}
	}
}

func TestAuditEndToEnd(t *testing.T) {
	e := newE2E(t, true)
	host, heroBytes := fixtureSite(t)

	var site struct{ ID string }
	e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+host+`","method":"simulated"}`, 201, &site)
	var pages []struct{ ID, URL string }
	e.api.Call(e.t, "POST", "/"+site.ID+"/settings/pages", `[{"url":"/","alias":"Home"},{"url":"/missing","alias":"Broken"}]`, 200, &pages)
	home, missing := pages[0].ID, pages[1].ID
	var kb, cls struct{ ID string }
	e.api.Call(e.t, "POST", "/"+site.ID+"/budgets", `{"metric":"kb_total","operator":"lt","value":100,"device":"all"}`, 201, &kb)
	e.api.Call(e.t, "POST", "/"+site.ID+"/budgets", `{"metric":"cls","operator":"lt","value":5,"device":"desktop"}`, 201, &cls)
	hooks := newHookReceiver(t)
	var hook struct{ ID, Secret string }
	e.api.Call(e.t, "POST", "/"+site.ID+"/channels", `{"name":"CI","kind":"webhook","url":"`+hooks.URL+`/openvitals"}`, 201, &hook)

	queued := time.Now().UTC()
	var res struct{ Queued int }
	e.api.Call(e.t, "POST", "/"+site.ID+"/audits", `{"pages":["`+home+`"]}`, 202, &res)
	e.api.Call(e.t, "POST", "/"+site.ID+"/audits", `{"pages":["`+missing+`"],"devices":["desktop"]}`, 202, nil)
	if res.Queued != 2 {
		t.Fatalf("queued %d audits of home, want 2 (desktop and mobile)", res.Queued)
	}
	jobs := []audit.Job{
		{Account: "acme", Website: site.ID, Page: home, Device: "desktop", Queued: queued},
		{Account: "acme", Website: site.ID, Page: home, Device: "mobile", Queued: queued},
		{Account: "acme", Website: site.ID, Page: missing, Device: "desktop", Queued: queued},
	}
	if p := e.work(jobs); p.Done != 2 || p.Failed != 1 {
		t.Fatalf("progress %+v, want home done on both devices and the missing page failed", p)
	}
	e.checkNothingLeft()

	// The kb_total budget went from ok to exceeded: one event, one signed webhook request. The
	// cls budget stays ok and the missing page failed one day only: neither is news.
	e.notifyAll()
	var evs struct {
		Result struct {
			List []struct{ ID, Type, Before, After string }
		}
	}
	e.api.Call(e.t, "GET", "/"+site.ID+"/events", "", 200, &evs)
	if len(evs.Result.List) != 1 || evs.Result.List[0].Type != "budget.status_changed" || evs.Result.List[0].Before != "ok" || evs.Result.List[0].After != "exceeded" {
		t.Fatalf("events %+v, want one budget.status_changed ok → exceeded", evs.Result.List)
	}
	if got := hooks.verified(t, hook.Secret); len(got) != 1 || got[0] != evs.Result.List[0].ID {
		t.Fatalf("webhook requests %v, want one signed with the event's id %s", got, evs.Result.List[0].ID)
	}
	// The desktop audit's message again (a redelivery): audited again, nothing new to tell.
	if err := e.worker.Audit(context.Background(), jobs[0], 1); err != nil {
		t.Fatal(err)
	}
	e.notifyAll()
	e.api.Call(e.t, "GET", "/"+site.ID+"/events", "", 200, &evs)
	if len(evs.Result.List) != 1 || len(hooks.verified(t, hook.Secret)) != 1 {
		t.Errorf("after a redelivered audit: %d events, %d webhook requests; want 1 and 1", len(evs.Result.List), len(hooks.verified(t, hook.Secret)))
	}

	// What html-validate says of the served document is what the page detail must show.
	doc, err := http.Get("http://" + host + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(doc.Body)
	doc.Body.Close()
	validation, err := e.runner.ValidateHTML(context.Background(), body)
	if err != nil || validation.Errors < 3 {
		t.Fatalf("html-validate on the fixture: %+v, %v; it holds at least 3 known errors", validation, err)
	}
	elements := countElements(t, body)

	for _, device := range []string{"desktop", "mobile"} {
		// Every run's values of the watched metrics are kept for regression detection.
		w, err := e.store.Website(context.Background(), "acme", site.ID)
		if err != nil {
			t.Fatal(err)
		}
		results, err := e.store.LabResults(context.Background(), w, home, device, "20000101", "29991231")
		if err != nil || len(results) != 1 {
			t.Fatalf("%s: lab results %+v, %v", device, results, err)
		}
		for _, metric := range regression.SourceMetrics[regression.SourceLab] {
			if got := results[0].Samples[metric]; len(got) != results[0].Runs {
				t.Errorf("%s: %d samples of %s for %d runs", device, len(got), metric, results[0].Runs)
			}
		}
		m := e.pageDetail(site.ID, home, device).LatestMetrics
		v := func(k string) float64 {
			if m[k] == nil {
				t.Errorf("%s: %s is null", device, k)
				return 0
			}
			return *m[k]
		}
		if v("validation_errors") != float64(validation.Errors) {
			t.Errorf("%s: validation_errors %v, html-validate counts %d", device, v("validation_errors"), validation.Errors)
		}
		if v("kb_total")*1024 < float64(heroBytes) {
			t.Errorf("%s: kb_total %v KB does not cover the %d-byte hero image", device, v("kb_total"), heroBytes)
		}
		if v("cls") <= 0 {
			t.Errorf("%s: cls %v, but the banner shifts the layout", device, v("cls"))
		}
		if v("fcp") <= 0 || v("lcp") < v("fcp") || v("performance_score") < 0 || v("performance_score") > 100 {
			t.Errorf("%s: implausible fcp %v, lcp %v, performance %v", device, v("fcp"), v("lcp"), v("performance_score"))
		}
		if v("cpu_total") < 300 {
			t.Errorf("%s: cpu_total %v ms, but the page runs a 300 ms task", device, v("cpu_total"))
		}
		if v("budgets_exceeded") < 1 {
			t.Errorf("%s: kb_total lt 100 should be exceeded: %v", device, v("budgets_exceeded"))
		}
		if v("opportunities") < 1 {
			t.Errorf("%s: no opportunities on a page with render-blocking resources", device)
		}

		var timeline struct{ Result []numbers }
		e.api.Call(e.t, "GET", "/"+site.ID+"/pages/"+home+"/timeline?device="+device, "", 200, &timeline)
		if len(timeline.Result) != 1 {
			t.Fatalf("%s: timeline has %d days, want 1", device, len(timeline.Result))
		}
		day := timeline.Result[0]
		if n := day["dom_elements"]; n == nil || *n < float64(elements-2) || *n > float64(elements+3) {
			t.Errorf("%s: dom_elements %v, the fixture has %d elements (plus the banner)", device, jsonString(n), elements)
		}
		for _, k := range []string{"dns_time", "connect_time", "server_time", "transfer_time", "dom_ready", "on_load", "tti", "dom_max_depth"} {
			if day[k] == nil || *day[k] < 0 {
				t.Errorf("%s: timeline %s = %v", device, k, day[k])
			}
		}

		e.checkDiagnostics(site.ID, home, device, host, heroBytes)

		var network struct{ Result []numbers }
		e.api.Call(e.t, "GET", "/"+site.ID+"/pages/"+home+"/network?device="+device, "", 200, &network)
		n := network.Result[0]
		if *n["bytes_image"] < float64(heroBytes) || *n["bytes_js"] <= 0 || *n["bytes_css"] <= 0 || *n["bytes_doc"] <= 0 ||
			*n["bytes_total"] < *n["bytes_image"]+*n["bytes_js"] {
			t.Errorf("%s: network bytes %v", device, jsonString(n))
		}
		if *n["bytes_thirdparty"] <= 0 {
			t.Errorf("%s: no third-party bytes, but widget.js comes from a second host: %v", device, jsonString(n))
		}

		var opps struct {
			Result struct {
				LighthouseVersion string
				List              map[string]struct{ ID, Category string }
			}
		}
		e.api.Call(e.t, "GET", "/"+site.ID+"/pages/"+home+"/opportunities?device="+device, "", 200, &opps)
		if opps.Result.LighthouseVersion != "13.5.0" || len(opps.Result.List) == 0 {
			t.Errorf("%s: page opportunities %+v", device, opps.Result)
		}
		for id := range opps.Result.List {
			var detail map[string]any
			e.api.Call(e.t, "GET", "/"+site.ID+"/pages/"+home+"/opportunities/"+id+"?device="+device, "", 200, &detail)
			if detail["id"] != id || detail["title"] == nil {
				t.Errorf("%s: detail of %s is %v", device, id, detail)
			}
			break
		}
	}

	var siteOpps struct {
		Result struct {
			List map[string]struct{ Pages []struct{ ID, Device string } }
		}
	}
	e.api.Call(e.t, "GET", "/"+site.ID+"/opportunities", "", 200, &siteOpps)
	if len(siteOpps.Result.List) == 0 {
		t.Error("no website-level opportunities")
	}

	var budgets struct {
		Result struct {
			List []struct {
				ID, Status string
				Pages      []struct{ ID, Device, Status string }
			}
		}
	}
	e.api.Call(e.t, "GET", "/"+site.ID+"/budgets", "", 200, &budgets)
	for _, b := range budgets.Result.List {
		switch b.ID {
		case kb.ID:
			if b.Status != "exceeded" || len(b.Pages) != 2 {
				t.Errorf("kb_total budget %+v: home exceeds it on both devices", b)
			}
		case cls.ID:
			if b.Status != "ok" || len(b.Pages) != 0 {
				t.Errorf("cls budget %+v", b)
			}
		}
	}

	// The page that cannot be audited shows why, after its one attempt: a document answering
	// 404 fails every attempt alike, so its first failure was final.
	broken := e.pageDetail(site.ID, missing, "desktop")
	if broken.LatestMetrics != nil || broken.LastError.Attempts != 1 || !strings.Contains(broken.LastError.Message, "404") {
		t.Errorf("broken page detail %+v", broken)
	}
}

// checkDiagnostics reads the day's diagnostics of the fixture's home page through the API: the
// hero image is the LCP element and its request is marked, the render-blocking stylesheet,
// script and the second host's script are marked, every frame's image is served, and the HAR
// is a HAR 1.2 of the load.
func (e *e2e) checkDiagnostics(site, page, device, host string, heroBytes int) {
	t := e.t
	t.Helper()
	var out struct {
		Date, Device, HAR string
		Diagnostics       model.Diagnostics
	}
	base := "/" + site + "/pages/" + page + "/diagnostics"
	e.api.Call(e.t, "GET", base+"?device="+device, "", 200, &out)
	d := out.Diagnostics
	if d.LCP == nil || d.LCP.ImageURL != "http://"+host+"/hero.png" || d.LCP.Phases.LoadDuration == nil {
		t.Errorf("%s: LCP %+v, want the hero image with its load phases", device, d.LCP)
	}
	marked := map[string]model.Request{}
	for _, r := range d.Requests {
		switch {
		case r.Document:
			marked["document"] = r
		case r.LCP:
			marked["lcp"] = r
		case strings.HasSuffix(r.URL, "/widget.js"):
			marked["widget"] = r
		case strings.HasSuffix(r.URL, "/blocking.js"):
			marked["blocking"] = r
		}
	}
	if doc := marked["document"]; doc.URL != "http://"+host+"/" || doc.Status != 200 || doc.Wait == nil {
		t.Errorf("%s: document request %+v", device, doc)
	}
	if hero := marked["lcp"]; hero.TransferSize < int64(heroBytes) || hero.Type != "Image" {
		t.Errorf("%s: LCP request %+v", device, hero)
	}
	if w := marked["widget"]; !w.ThirdParty || !w.RenderBlocking {
		t.Errorf("%s: second host's script %+v: third party, render-blocking", device, w)
	}
	if b := marked["blocking"]; b.ThirdParty || !b.RenderBlocking {
		t.Errorf("%s: blocking.js %+v", device, b)
	}
	if len(d.LongTasks) == 0 || len(d.MainThread) == 0 || len(d.Filmstrip) == 0 || d.FinalScreenshot == nil || len(d.Shifts) == 0 {
		t.Errorf("%s: %d long tasks, %d main-thread categories, %d frames, final %v, %d shifts", device,
			len(d.LongTasks), len(d.MainThread), len(d.Filmstrip), d.FinalScreenshot, len(d.Shifts))
	}
	for _, f := range append(d.Filmstrip, *d.FinalScreenshot) {
		req := httptest.NewRequest("GET", f.URL, nil)
		req.Header.Set("Authorization", "Bearer "+apitest.AdminKey)
		rec := httptest.NewRecorder()
		e.api.Handler.ServeHTTP(rec, req)
		if b := rec.Body.Bytes(); rec.Code != 200 || len(b) < 100 || b[0] != 0xff || b[1] != 0xd8 {
			t.Errorf("%s: frame %s: %d, %d bytes", device, f.URL, rec.Code, len(b))
		}
	}
	var har struct {
		Log struct {
			Version string
			Creator struct{ Name, Version string }
			Entries []struct {
				StartedDateTime string
				Request         struct{ Method, URL string }
				Response        struct{ Status int }
				Timings         map[string]float64
			}
		}
	}
	e.api.Call(e.t, "GET", out.HAR, "", 200, &har)
	if har.Log.Version != "1.2" || har.Log.Creator.Name == "" || len(har.Log.Entries) == 0 {
		t.Errorf("%s: HAR log %+v", device, har.Log)
	}
	for _, en := range har.Log.Entries {
		if _, err := time.Parse(time.RFC3339Nano, en.StartedDateTime); err != nil || en.Request.Method == "" || en.Request.URL == "" {
			t.Errorf("%s: HAR entry %+v", device, en)
		}
		if _, ok := en.Timings["wait"]; !ok {
			t.Errorf("%s: HAR entry without wait: %+v", device, en)
		}
	}
}

// TestAuditRefusesPrivateTargets shows that without OPENVITALS_ALLOW_PRIVATE_TARGETS a page on
// loopback is not audited and the refusal is recorded, and that the page's lastError names
// no address a name resolved to and no resolver (the log has those).
func TestAuditRefusesPrivateTargets(t *testing.T) {
	e := newE2E(t, false)
	host, _ := fixtureSite(t)
	_, port, _ := net.SplitHostPort(host)
	for _, tc := range []struct {
		domain, want, hidden string
	}{
		{host, "refused: 127.0.0.1 is a loopback address", ""},
		{"localhost:" + port, "refused: the address of localhost is not public", "127.0.0.1"},
		{"no-such-host.invalid", "no-such-host.invalid: the host does not resolve", ":53"},
	} {
		var site struct{ ID string }
		e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+tc.domain+`","method":"simulated"}`, 201, &site)
		var pages []struct{ ID string }
		e.api.Call(e.t, "POST", "/"+site.ID+"/settings/pages", `[{"url":"/"}]`, 200, &pages)
		job := audit.Job{Account: "acme", Website: site.ID, Page: pages[0].ID, Device: "desktop", Queued: time.Now().UTC()}
		if err := e.worker.Audit(context.Background(), job, 1); err == nil {
			t.Fatalf("%s was audited", tc.domain)
		}
		if got := e.pageDetail(site.ID, pages[0].ID, "desktop").LastError.Message; got != tc.want || tc.hidden != "" && strings.Contains(got, tc.hidden) {
			t.Errorf("%s: lastError %q, want %q", tc.domain, got, tc.want)
		}
	}
	e.checkNothingLeft()
}

func countElements(t *testing.T, doc []byte) int {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	// Lighthouse counts the body and the elements in it.
	n := 0
	var walk func(*html.Node, bool)
	walk = func(node *html.Node, inBody bool) {
		inBody = inBody || node.Type == html.ElementNode && node.Data == "body"
		if node.Type == html.ElementNode && inBody {
			n++
		}
		for c := node.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody)
		}
	}
	walk(root, false)
	return n
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return fmt.Sprint(string(b))
}

// numbers decodes a day item: its number fields, skipping the date.
type numbers map[string]*float64

func (n *numbers) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*n = numbers{}
	for k, v := range raw {
		var f *float64
		if json.Unmarshal(v, &f) == nil {
			(*n)[k] = f
		}
	}
	return nil
}
