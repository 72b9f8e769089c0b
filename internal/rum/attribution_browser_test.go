package rum_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/journey"
	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/browsertest"
)

// thirdPartyHost is a host of the third-party-web dataset (Google Tag Manager) that the test's
// browser resolves to the loopback address, where the test serves the "third party" script.
const thirdPartyHost = "www.googletagmanager.com"

// attributionPage is built to cause each attribution: an image without size that arrives
// after 300 ms and pushes the text below it down (CLS), a hero image at the end whose response
// comes 700 ms late (LCP, its resource load duration; no box is reserved for it, so the shift
// moves the text only), and a button whose click handler, added by the third party's script,
// runs a 300 ms task (INP, the script its long animation frame ran).
const attributionPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Attribution fixture</title>
<script async src="%[1]s/rum/%[2]s.js"></script>
<script src="http://%[3]s/gtm.js"></script>
<style>body{margin:0;font:18px sans-serif} main{width:900px;margin:0 auto} #hero{display:block}</style>
</head><body><main>
<img id="unsized" src="/unsized.png" alt="">
<p id="shifted">This paragraph moves down when the image above arrives without reserved space.</p>
<button id="buy" style="font-size:24px">Buy</button>
<p id="status"></p>
<img id="hero" src="/hero.png" alt="">
</main></body></html>`

// thirdPartyScript adds the button's slow handler, so that the long animation frame of the
// click names this script and its function.
const thirdPartyScript = `document.addEventListener("DOMContentLoaded", function () {
  document.getElementById("buy").addEventListener("click", function onBuyClick() {
    var end = performance.now() + 300;
    while (performance.now() < end) {}
    document.getElementById("status").textContent = "bought";
  });
});`

// pngOf is an image of noise around a colour: Chromium leaves images of less than 0.05 bits
// per pixel (a plain colour) out of LCP.
func pngOf(w, h int, c color.RGBA) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	for y := range h {
		for x := range w {
			n := uint8(rng.IntN(64))
			img.Set(x, y, color.RGBA{c.R/2 + n, c.G/2 + n, c.B/2 + n, 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

// rumService is the service's API over a table and FIFO queue of the test's own, with a
// record of the beacons /collect is sent and what it answered.
type rumService struct {
	t      *testing.T
	store  *store.Store
	rums   *rumstore.Store
	queue  *queue.Queue
	server *httptest.Server
	key    string

	mu       sync.Mutex
	beacons  [][]byte
	statuses []int
}

func newRUMService(t *testing.T) *rumService {
	clients := awstest.Clients(t)
	s := &rumService{t: t, store: awstest.Store(t, clients), queue: awstest.FIFOQueue(t, clients, service.RUMQueueSettings),
		key: "acme-admin-key-rum-attribution-01"}
	s.rums = awstest.RUM(t, s.store)
	apitest.Provision(t, s.store, apikey.Grant{Account: "acme", Role: model.RoleAdmin, Key: s.key})
	handler := api.New(api.Deps{Store: s.store, Log: awstest.Log(t), Beacons: rum.NewCollector(s.queue), Field: rum.NewReader(s.rums), RUM: s.rums}).Handler()
	s.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && r.URL.Path == "/collect" {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			rec := &statusRecorder{ResponseWriter: w}
			handler.ServeHTTP(rec, r)
			s.mu.Lock()
			s.beacons = append(s.beacons, body)
			s.statuses = append(s.statuses, rec.status)
			s.mu.Unlock()
			return
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(s.server.Close)
	return s
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

// accepted counts the beacons /collect queued (202).
func (s *rumService) accepted() (n int, all int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.statuses {
		if st == http.StatusAccepted {
			n++
		}
	}
	return n, len(s.statuses)
}

// fold runs the queued views through the aggregator until views have been folded.
func (s *rumService) fold(views int) {
	agg := rumworker.NewAggregatorWith(s.store, s.rums, quota.NewKeeper(s.store, time.Now), awstest.Log(s.t), geo.Country)
	var mu sync.Mutex
	folded := 0
	awstest.Drain(s.t, s.queue, 10, func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		resp, err := agg.HandleSQS(ctx, ev)
		for _, m := range ev.Records {
			var b rum.WireBatch
			if json.Unmarshal([]byte(m.Body), &b) == nil {
				mu.Lock()
				folded += len(b.Views)
				mu.Unlock()
			}
		}
		return resp, err
	}, func(int) bool { mu.Lock(); defer mu.Unlock(); return folded >= views })
}

func (s *rumService) get(path string, out any) {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.server.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		s.t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
}

// fixtureSite serves the attribution page and its images on one loopback port, and the third
// party's script on another; the website is the page's host.
func fixtureSite(t *testing.T, svc *rumService) (pageURL string, site model.Website, thirdParty string) {
	third := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, thirdPartyScript)
	}))
	t.Cleanup(third.Close)
	thirdParty = thirdPartyHost + ":" + strings.TrimPrefix(third.URL, "http://127.0.0.1:")
	hero, unsized := pngOf(800, 400, color.RGBA{200, 60, 40, 255}), pngOf(300, 150, color.RGBA{40, 90, 200, 255})
	var siteID string
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hero.png":
			time.Sleep(700 * time.Millisecond)
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(hero)
		case "/unsized.png":
			time.Sleep(300 * time.Millisecond)
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(unsized)
		case "/product/shoe":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, attributionPage, svc.server.URL, siteID, thirdParty)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!doctype html><title>elsewhere</title><p>elsewhere</p>")
		}
	}))
	t.Cleanup(pages.Close)
	site = model.Website{Account: "acme", Domain: strings.TrimPrefix(pages.URL, "http://"), DisplayName: "fixture"}
	if err := svc.store.CreateWebsite(context.Background(), &site); err != nil {
		t.Fatal(err)
	}
	siteID = site.ID
	return pages.URL + "/product/shoe?from=ad", site, thirdParty
}

// realUserBrowser is a plain headless Chromium, as a visitor's browser would be: not one of
// openvitals' lab browsers (no guarded proxy, no lab mark), resolving the third party's host
// to the loopback address.
func realUserBrowser(t *testing.T) *rod.Browser {
	bin, err := browser.LookBin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := launcher.New().Bin(bin).Leakless(false).Headless(true).NoSandbox(true).UserDataDir(filepath.Join(dir, "profile")).
		Set("disable-dev-shm-usage").Set("disable-gpu").Set("host-resolver-rules", "MAP "+thirdPartyHost+" 127.0.0.1").
		Env(append(os.Environ(), "TMPDIR="+dir)...)
	u, err := l.Launch()
	if err != nil {
		t.Fatal(err)
	}
	b := rod.New().ControlURL(u)
	if err := b.Connect(); err != nil {
		l.Kill()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = b.Close()
		l.Kill()
		l.Cleanup()
	})
	return b
}

// A real Chromium loads a page built to cause each attribution, the user taps or clicks the
// slow button and leaves; the reports name the hero image as the LCP element with phases
// adding up to its LCP, the button as the INP target with the third party's script (and its
// entity) as the longest script of the interaction, and the paragraph the image pushed down as
// the CLS target. (The selectors are web-vitals' own: an element with an id is "#id".)
//
// What headless Chromium lacks: with an image box reserved but not yet painted above the
// button, it recorded no long animation frame for interactions sent through the DevTools
// protocol and gave a mouse click's pointer entries no target; with this page it records both
// (Chromium leaves LoAF's sourceFunctionName of an event listener empty: the function is not
// checked). The user visits twice, tapping once and clicking once; the scripts are checked
// where the browser recorded the frame, and the test says so where it did not.
func TestAttributionFromRealChromium(t *testing.T) {
	svc := newRUMService(t)
	pageURL, site, thirdParty := fixtureSite(t, svc)
	b := realUserBrowser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tap := func(page *rod.Page, btn *rod.Element) error {
		box, err := btn.Shape()
		if err != nil {
			return err
		}
		at := box.OnePointInside()
		for _, ev := range []proto.InputDispatchTouchEvent{
			{Type: proto.InputDispatchTouchEventTypeTouchStart, TouchPoints: []*proto.InputTouchPoint{{X: at.X, Y: at.Y}}},
			{Type: proto.InputDispatchTouchEventTypeTouchEnd, TouchPoints: []*proto.InputTouchPoint{}},
		} {
			if err := ev.Call(page); err != nil {
				return err
			}
		}
		return nil
	}
	click := func(_ *rod.Page, btn *rod.Element) error { return btn.Click(proto.InputMouseButtonLeft, 1) }
	hasLoAF := false
	var lcps []float64
	for visit, interact := range []func(*rod.Page, *rod.Element) error{tap, click} {
		page, err := b.Context(ctx).Page(proto.TargetCreateTarget{URL: "about:blank"})
		if err != nil {
			t.Fatal(err)
		}
		if err := (proto.EmulationSetDeviceMetricsOverride{Width: 1200, Height: 1000, DeviceScaleFactor: 1}).Call(page); err != nil {
			t.Fatal(err)
		}
		if err := page.Navigate(pageURL); err != nil {
			t.Fatal(err)
		}
		if err := page.WaitLoad(); err != nil {
			t.Fatal(err)
		}
		if err := page.Timeout(20 * time.Second).Wait(rod.Eval(`() => !!(window.webVitals && window.openvitals && !Array.isArray(window.openvitals)) &&
			document.getElementById("hero").complete && document.getElementById("unsized").complete`)); err != nil {
			t.Fatalf("the snippet or the images did not load: %v", err)
		}
		time.Sleep(500 * time.Millisecond) // the hero painted, LCP settled before the input
		btn, err := page.Element("#buy")
		if err != nil {
			t.Fatal(err)
		}
		if err := interact(page, btn); err != nil {
			t.Fatal(err)
		}
		// web-vitals processes interactions in an idle callback with a 1 s timeout.
		time.Sleep(1500 * time.Millisecond)
		measured, err := page.Eval(`() => new Promise(resolve => {
			new PerformanceObserver(list => {
				const lcp = list.getEntries().pop();
				resolve({lcp: lcp.startTime, lcpElement: lcp.element && lcp.element.id});
			}).observe({type: "largest-contentful-paint", buffered: true});
		})`)
		if err != nil {
			t.Fatal(err)
		}
		if id := measured.Value.Get("lcpElement").Str(); id != "hero" {
			t.Fatalf("the browser's LCP element is %q, not the hero: the fixture does not do what it should", id)
		}
		// Did the browser record the interaction's long animation frame with the script?
		loaf, err := page.Eval(`() => new Promise(resolve => {
			if (!PerformanceObserver.supportedEntryTypes.includes("long-animation-frame")) return resolve(false);
			let found = false;
			new PerformanceObserver(list => {
				for (const e of list.getEntries()) found = found || e.scripts.some(s => s.sourceURL.includes("/gtm.js"));
			}).observe({type: "long-animation-frame", buffered: true});
			setTimeout(() => resolve(found), 500);
		})`)
		if err != nil {
			t.Fatal(err)
		}
		hasLoAF = hasLoAF || loaf.Value.Bool()
		// Leaving the page hides it: the snippet sends its beacon.
		if err := page.Navigate("about:blank"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			if n, _ := svc.accepted(); n == visit+1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("no beacon accepted within 15 s of leaving the page")
			}
			time.Sleep(100 * time.Millisecond)
		}
		svc.mu.Lock()
		beacon := svc.beacons[visit]
		svc.mu.Unlock()
		t.Logf("beacon: %s", beacon)
		var sent struct {
			V []struct{ M map[string]float64 }
		}
		if err := json.Unmarshal(beacon, &sent); err != nil || len(sent.V) != 1 {
			t.Fatalf("beacon %s: want one view (%v)", beacon, err)
		}
		lcps = append(lcps, sent.V[0].M["lcp"])
		if strings.Contains(string(beacon), "hero.png?") {
			t.Error("the beacon carries a resource URL with its query")
		}
		_ = page.Close()
	}
	if !hasLoAF {
		t.Log("headless Chromium recorded no long animation frame with the third party's script for the interactions " +
			"(or has no Long Animation Frames API): the report's scripts are not checked here (TestFieldSegmentReports checks them from beacons)")
	}
	svc.fold(2)

	base := "/" + site.ID + "/field-testing/attributions?date=" + time.Now().UTC().Format("20060102") + "-" + time.Now().UTC().Format("20060102")
	type item struct {
		Element, URL, Target, Type, Entity, Function string
		Views                                        int
		Value, Mean                                  float64
		Parts                                        map[string]float64
	}
	var lcp struct{ Result struct{ Elements []item } }
	svc.get(base+"&metric=lcp", &lcp)
	if len(lcp.Result.Elements) != 1 {
		t.Fatalf("LCP elements %+v", lcp.Result.Elements)
	}
	el := lcp.Result.Elements[0]
	if !strings.HasSuffix(el.Element, "#hero") || !strings.HasSuffix(el.URL, "/hero.png") || el.Views != 2 {
		t.Errorf("LCP element %+v, want the hero image", el)
	}
	var phases float64
	for _, name := range rum.KindLCP.Parts {
		phases += el.Parts[name]
	}
	if math.Abs(phases-el.Mean) > 0.5 || math.Abs(el.Mean-(lcps[0]+lcps[1])/2) > 0.5 {
		t.Errorf("phases %v add up to %.1f, mean LCP %.1f (beacons %v)", el.Parts, phases, el.Mean, lcps)
	}
	if el.Parts["resourceLoadDuration"] < 650 {
		t.Errorf("resource load duration %v: the hero's response came 700 ms late", el.Parts["resourceLoadDuration"])
	}

	var inp struct {
		Result struct{ Targets, Scripts, Entities []item }
	}
	svc.get(base+"&metric=inp", &inp)
	var button *item
	for i, target := range inp.Result.Targets {
		if strings.HasSuffix(target.Target, "#buy") {
			button = &inp.Result.Targets[i]
		}
	}
	if button == nil || button.Type != "pointer" || button.Value < 300 {
		t.Fatalf("INP targets %+v, want the button, pointer, at least 300 ms", inp.Result.Targets)
	}
	var inpPhases float64
	for _, name := range rum.KindINP.Parts {
		inpPhases += button.Parts[name]
	}
	if math.Abs(inpPhases-button.Mean) > 8.5 {
		t.Errorf("INP phases %v add up to %.1f, INP %.1f (Event Timing durations are rounded to 8 ms)", button.Parts, inpPhases, button.Mean)
	}
	if hasLoAF {
		if len(inp.Result.Scripts) == 0 {
			t.Fatalf("no script of the interaction: %+v", inp.Result)
		}
		top := inp.Result.Scripts[0]
		if top.URL != "http://"+thirdParty+"/gtm.js" || top.Entity != "Google Tag Manager" || top.Parts["duration"] < 290 {
			t.Errorf("top LoAF script %+v, want the third party's gtm.js, Google Tag Manager, about 300 ms", top)
		}
		if len(inp.Result.Entities) == 0 || inp.Result.Entities[0].Entity != "Google Tag Manager" {
			t.Errorf("entities %+v", inp.Result.Entities)
		}
	}

	var cls struct{ Result struct{ Targets []item } }
	svc.get(base+"&metric=cls", &cls)
	if len(cls.Result.Targets) != 1 || !strings.HasSuffix(cls.Result.Targets[0].Target, "#shifted") || cls.Result.Targets[0].Value <= 0 ||
		cls.Result.Targets[0].Views != 2 {
		t.Errorf("CLS targets %+v, want the paragraph the image pushed down", cls.Result.Targets)
	}
}

// openvitals' own page loads of a page carrying the snippet (a Lighthouse audit, a multistep
// run) are not counted; the same browser's unmarked load of the
// page is, so the setup would count them were they not marked.
func TestLabPageLoadsAreNotCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("a real Lighthouse audit takes some 20 s")
	}
	svc := newRUMService(t)
	pageURL, _, _ := fixtureSite(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin, err := browser.LookBin()
	if err != nil {
		t.Fatal(err)
	}
	log := awstest.Log(t)
	// A short temporary root: Chromium's socket path under it must fit a Unix socket's 107 bytes.
	temp, err := os.MkdirTemp("", "ovl")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(temp)
	opts := browser.Options{Bin: bin, Guard: browser.Guard{AllowPrivate: true}, TempRoot: temp, Log: log}

	// A Lighthouse audit, as the audit worker runs it.
	sess, err := browser.Launch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := lighthouse.DefaultRunnerConfig(browsertest.RepoRoot(t))
	cfg.Log = log
	runner := lighthouse.NewRunner(cfg)
	defer runner.Close()
	meta, err := runner.Audit(ctx, lighthouse.AuditRequest{URL: pageURL, Port: sess.Port(), Device: lighthouse.DeviceDesktop,
		ReportPath: filepath.Join(t.TempDir(), "report.json")})
	if err != nil || meta.RuntimeError != nil {
		t.Fatalf("audit: %v %+v", err, meta.RuntimeError)
	}

	// A multistep run that opens the page, clicks and goes elsewhere (hiding the page).
	u, _ := url.Parse(pageURL)
	res, err := journey.Run(ctx, journey.Options{Browser: opts, BaseURL: "http://" + u.Host}, []step.Step{
		{Type: step.Navigate, Target: pageURL},
		{Type: step.Click, Target: "#buy"},
		{Type: step.Navigate, Target: "/elsewhere"},
	})
	if err != nil || res.FailedStep >= 0 {
		t.Fatalf("run: %v %+v", err, res)
	}
	time.Sleep(2 * time.Second) // a beacon, were one sent, would have arrived
	if n, all := svc.accepted(); n != 0 {
		t.Fatalf("%d of %d beacons of lab page loads were counted", n, all)
	}

	// Control: the same lab browser without the mark is a visitor, and is counted.
	page, err := sess.Browser().Context(ctx).Page(proto.TargetCreateTarget{URL: pageURL})
	if err != nil {
		t.Fatal(err)
	}
	if err := page.WaitLoad(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := page.Navigate("about:blank"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		if n, _ := svc.accepted(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the unmarked load's beacon was not counted: the test could not tell")
		}
		time.Sleep(100 * time.Millisecond)
	}
	_ = sess.Close()
}
