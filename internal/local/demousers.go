package local

// The demo's real users. A real Chromium visits the shop's pages with its RUM snippet on a
// desktop and an emulated phone (its CPU slowed four times), before the deploy and after it,
// clicking the buy button where there is one; each visit's beacon goes through collect as any
// browser's does and is recorded there. The weeks of page views are those beacons replayed:
// the same metrics and attribution (LCP element and phases, INP target, phases and scripts,
// CLS target), the loading times set to the pace the lab measured that page at on that device
// in that version (a visit on loopback loads at once), with a day's and a view's spread. They
// go through the page-view path of collect (rum.Site.View, then the collector's queue, the
// rebatcher and the fold) with their own days. The user-experience records are the 28-day
// windows of the same views, so the field p75 moves after the deploy as slowly as a 28-day
// window does.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/demoshop"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

const (
	// uxWindowDays is the span of a user-experience record: the dataset's rolling window.
	uxWindowDays = 28
	// demoPhoneSlowdown is the emulated phone's CPU slowdown in the visits.
	demoPhoneSlowdown = 4
)

// DemoDailyViews is how many page views the demo's real users make on a device on the day
// daysAgo: more on phones, fewer at weekends.
func DemoDailyViews(device string, daysAgo int, now time.Time) int {
	n := 14
	if device == "mobile" {
		n = 22
	}
	if wd := now.AddDate(0, 0, -daysAgo).Weekday(); wd == time.Saturday || wd == time.Sunday {
		n = n * 2 / 3
	}
	return n
}

// beaconRecorder keeps the beacons collect accepts while it is on, with their user agents.
type beaconRecorder struct {
	mu  sync.Mutex
	on  bool
	got []recordedBeacon
}

type recordedBeacon struct {
	userAgent string
	body      []byte
}

// record passes every request on to h, keeping the body of each beacon h accepts.
func (r *beaconRecorder) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		on := r.on
		r.mu.Unlock()
		if !on || req.Method != http.MethodPost || req.URL.Path != "/collect" {
			h.ServeHTTP(w, req)
			return
		}
		// What is past the limit stays for h to refuse as it would.
		body, _ := io.ReadAll(io.LimitReader(req.Body, rum.MaxBeaconBytes))
		req.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), req.Body))
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, req)
		if rec.status == http.StatusAccepted {
			r.mu.Lock()
			r.got = append(r.got, recordedBeacon{userAgent: req.UserAgent(), body: body})
			r.mu.Unlock()
		}
	})
}

// recording turns recording on or off.
func (r *beaconRecorder) recording(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = on
}

// since returns the beacons recorded after the first n.
func (r *beaconRecorder) since(n int) []recordedBeacon {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got[min(n, len(r.got)):])
}

func (r *beaconRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// demoVisit is a real visit's page view: the device, the shop's version and the page, the
// browser's user agent and the beacon as collect read it.
type demoVisit struct {
	device, version, path string
	userAgent             string
	beacon                rum.Beacon
}

// visitShop visits every page of the shop on each device in a fresh Chromium, as a real user
// of the shop's version does, and returns the page views collect accepted.
func (d *demo) visitShop(ctx context.Context, version string) ([]demoVisit, error) {
	bin, err := browser.LookBin()
	if err != nil {
		return nil, err
	}
	sess, err := browser.Launch(ctx, browser.Options{Bin: bin, Guard: browser.Guard{AllowPrivate: true}, Log: d.log})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	d.visits.recording(true)
	defer d.visits.recording(false)
	var out []demoVisit
	for _, device := range metrics.Devices {
		for _, path := range demoshop.Paths {
			v, err := d.visit(ctx, sess.Browser(), device, path)
			if err != nil {
				return nil, fmt.Errorf("a real user's visit of %s on %s: %w", path, device, err)
			}
			v.version = version
			out = append(out, v)
		}
	}
	return out, nil
}

// visit loads a page in a fresh incognito context (nothing cached), waits for the snippet,
// clicks the page's button if it has one, hides the page, and returns the beacon it sent.
func (d *demo) visit(ctx context.Context, b *rod.Browser, device, path string) (demoVisit, error) {
	v := demoVisit{device: device, path: path}
	incognito, err := b.Context(ctx).Incognito()
	if err != nil {
		return v, err
	}
	defer func() { _ = incognito.Close() }()
	page, before, err := d.load(incognito, device, path)
	if err != nil {
		return v, err
	}
	if err := demoInteract(ctx, page, device); err != nil {
		return v, err
	}
	v.userAgent, v.beacon, err = d.leave(ctx, page, before)
	return v, err
}

// load opens path as device in a new page of b and waits until the snippet has loaded. It
// returns the page and how many beacons collect had recorded before.
func (d *demo) load(b *rod.Browser, device, path string) (*rod.Page, int, error) {
	page, err := b.Page(proto.TargetCreateTarget{URL: "about:blank"})
	if err != nil {
		return nil, 0, err
	}
	if err := demoEmulate(page, device); err != nil {
		return nil, 0, err
	}
	before := d.visits.count()
	if err := page.Navigate("http://" + d.host + path); err != nil {
		return nil, 0, err
	}
	if err := page.WaitLoad(); err != nil {
		return nil, 0, err
	}
	// A loaded headless page paints only when asked to: a screencast (a screen someone looks
	// at) has it paint each frame as a browser on a screen does, without which an
	// interaction's next paint, and so its INP, waits for whatever asks for a frame next.
	go page.EachEvent(func(e *proto.PageScreencastFrame) {
		_ = proto.PageScreencastFrameAck{SessionID: e.SessionID}.Call(page)
	})()
	quality, side, every := 10, 64, 1
	if err := (proto.PageStartScreencast{Format: proto.PageStartScreencastFormatJpeg, Quality: &quality, MaxWidth: &side, MaxHeight: &side, EveryNthFrame: &every}).Call(page); err != nil {
		return nil, 0, err
	}
	if err := page.Timeout(20 * time.Second).Wait(rod.Eval(`() => !!(window.webVitals && window.openvitals && !Array.isArray(window.openvitals))`)); err != nil {
		return nil, 0, fmt.Errorf("the snippet did not load: %w", err)
	}
	return page, before, nil
}

// demoInteract reads the page past the shop's late offer, as a reader does, then taps or
// clicks its buy button where there is one.
func demoInteract(ctx context.Context, page *rod.Page, device string) error {
	pause := func(d time.Duration) error {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
			return nil
		}
	}
	if err := pause(time.Second); err != nil {
		return err
	}
	buttons, err := page.Elements("main button")
	if err != nil || len(buttons) == 0 {
		return err
	}
	if device == "mobile" {
		err = buttons[0].Tap()
	} else {
		err = buttons[0].Click(proto.InputMouseButtonLeft, 1)
	}
	if err != nil {
		return err
	}
	// web-vitals reads an interaction in an idle callback (at most 1 s later); one still
	// pending when the page is hidden is not reported.
	return pause(1500 * time.Millisecond)
}

// leave minimizes the window, which hides the page: the snippet sends its beacon. It returns
// the beacon collect recorded after the first before, with its user agent. (A beacon of a
// page left for another goes with the browser's own user agent, not the device's the page
// was given.)
func (d *demo) leave(ctx context.Context, page *rod.Page, before int) (string, rum.Beacon, error) {
	w, err := proto.BrowserGetWindowForTarget{TargetID: page.TargetID}.Call(page)
	if err != nil {
		return "", rum.Beacon{}, err
	}
	if err := (proto.BrowserSetWindowBounds{WindowID: w.WindowID, Bounds: &proto.BrowserBounds{WindowState: proto.BrowserWindowStateMinimized}}).Call(page); err != nil {
		return "", rum.Beacon{}, err
	}
	err = demoWait(ctx, "the visit's beacon", 15*time.Second, func() (bool, error) { return d.visits.count() > before, nil })
	if err != nil {
		return "", rum.Beacon{}, err
	}
	got := d.visits.since(before)[0]
	beacons, err := rum.ParseBeacons(got.body)
	if err != nil || len(beacons) != 1 {
		return "", rum.Beacon{}, fmt.Errorf("the visit's beacon %s: %v", got.body, err)
	}
	return got.userAgent, beacons[0], nil
}

// demoEmulate makes the page a desktop (1350x940) or a phone (412x915, touch, a phone's user
// agent and a CPU demoPhoneSlowdown times slower). Unlike the lab's browsers it leaves the user
// agent without openvitals' lab mark: these are the demo's real users.
func demoEmulate(p *rod.Page, device string) error {
	v, err := proto.BrowserGetVersion{}.Call(p.Browser())
	if err != nil {
		return err
	}
	reqs := []proto.Request{
		proto.EmulationSetDeviceMetricsOverride{Width: 1350, Height: 940, DeviceScaleFactor: 1},
		proto.EmulationSetUserAgentOverride{UserAgent: strings.Replace(v.UserAgent, "HeadlessChrome/", "Chrome/", 1)},
	}
	if device == "mobile" {
		version := v.Product[strings.IndexByte(v.Product, '/')+1:]
		major, _, _ := strings.Cut(version, ".")
		touchPoints := 5
		reqs = []proto.Request{
			proto.EmulationSetDeviceMetricsOverride{Width: 412, Height: 915, DeviceScaleFactor: 2.625, Mobile: true,
				ScreenOrientation: &proto.EmulationScreenOrientation{Type: proto.EmulationScreenOrientationTypePortraitPrimary}},
			proto.EmulationSetTouchEmulationEnabled{Enabled: true, MaxTouchPoints: &touchPoints},
			proto.EmulationSetUserAgentOverride{UserAgent: "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/" +
				major + ".0.0.0 Mobile Safari/537.36", Platform: "Linux armv8l"},
			proto.EmulationSetCPUThrottlingRate{Rate: demoPhoneSlowdown},
		}
	}
	for _, req := range reqs {
		if _, err := p.Call(p.GetContext(), string(p.SessionID), req.ProtoReq(), req); err != nil {
			return err
		}
	}
	return nil
}

// demoView is a replayed page view: the day it belongs to (days before today), its device and
// page, and the beacon as a browser of userAgent would have sent it.
type demoView struct {
	daysAgo      int
	device, path string
	userAgent    string
	beacon       rum.Beacon
}

// demoLab gives the lab's metrics of a page on a device in a shop version.
type demoLab func(path, device, version string) map[string]float64

// demoCountries are where the shop's customers are, by share.
var demoCountries = []struct {
	code  string
	share int
}{{"DE", 30}, {"NL", 14}, {"FR", 12}, {"GB", 11}, {"AT", 8}, {"BE", 8}, {"CH", 7}, {"US", 6}, {"SE", 4}}

// replayVisits makes the demo's page views of the history's days and of the window before
// them (for the user-experience records) from the visits' page views: each a visit of its
// device, version (2.3 before the deploy, 2.4 after it, on the deploy's day from its hour
// on) and page, with the loading times at the lab's pace, a day's spread and a view's.
func replayVisits(visits []demoVisit, lab demoLab, now time.Time) ([]demoView, error) {
	shapes := map[string]demoVisit{}
	for _, v := range visits {
		shapes[v.device+v.version+v.path] = v
	}
	rng := rand.New(rand.NewPCG(28, 24))
	var out []demoView
	for daysAgo := DemoHistoryDays + uxWindowDays - 1; daysAgo >= 0; daysAgo-- {
		for _, device := range metrics.Devices {
			day := math.Exp(0.06 * rng.NormFloat64())
			for range DemoDailyViews(device, daysAgo, now) {
				path := demoshop.Paths[0]
				if rng.Float64() < 0.35 {
					path = demoshop.Paths[1]
				}
				version := "2.4"
				if daysAgo > DemoDeployedDaysAgo || daysAgo == DemoDeployedDaysAgo && rng.Float64() < 9.0/24 {
					version = "2.3"
				}
				shape, ok := shapes[device+version+path]
				if !ok {
					return nil, fmt.Errorf("no visit of %s on %s in %s", path, device, version)
				}
				out = append(out, demoView{daysAgo: daysAgo, device: device, path: path, userAgent: shape.userAgent,
					beacon: reshape(shape.beacon, lab(path, device, version), day*math.Exp(0.3*rng.NormFloat64()), math.Exp(0.45*rng.NormFloat64()))})
			}
		}
	}
	return out, nil
}

// loadTimes are the beacon's metrics of the page's load, which the lab's pace sets.
var loadTimes = []string{"ttfb", "fp", "fcp", "lcp", "dns_time", "connect_time", "server_time", "transfer_time", "dom_time", "fully_loaded_time"}

// reshape is a visit's beacon as a view of another load: its load times at the lab's pace
// (the lab's LCP over the visit's), times load; its interaction's times and its layout shift
// times interaction; its attribution the visit's, with phases and durations scaled alike.
func reshape(b rum.Beacon, lab map[string]float64, load, interaction float64) rum.Beacon {
	pace := 1.0
	if b.Metrics["lcp"] > 0 && lab["lcp"] > 0 {
		pace = lab["lcp"] / b.Metrics["lcp"]
	}
	m := make(map[string]float64, len(b.Metrics))
	for k, v := range b.Metrics {
		switch {
		case k == "lcp" || k == "fcp" || k == "ttfb":
			if lab[k] > 0 {
				v = lab[k]
			}
			m[k] = math.Round(v * load)
		case slices.Contains(loadTimes, k):
			m[k] = math.Round(v * pace * load)
		case k == "inp" || k == "fid":
			m[k] = math.Round(v * interaction)
		case k == "cls":
			m[k] = math.Round(v*interaction*1000) / 1000
		default: // counts and sizes
			m[k] = v
		}
	}
	out := b
	out.Metrics = m
	if a := b.Attribution; a != nil {
		c := *a
		if a.LCP != nil {
			l := *a.LCP
			sum := l.Phases[0] + l.Phases[1] + l.Phases[2] + l.Phases[3]
			for i := range l.Phases {
				if sum > 0 {
					l.Phases[i] = math.Round(l.Phases[i] * m["lcp"] / sum)
				}
			}
			c.LCP = &l
		}
		if a.INP != nil {
			i := *a.INP
			for j := range i.Phases {
				i.Phases[j] = math.Round(i.Phases[j] * interaction)
			}
			i.Scripts = slices.Clone(i.Scripts)
			for j := range i.Scripts {
				i.Scripts[j].Duration = math.Round(i.Scripts[j].Duration * interaction)
			}
			c.INP = &i
		}
		if a.CLS != nil {
			s := *a.CLS
			s.Time = math.Round(s.Time * pace * load)
			c.CLS = &s
		}
		out.Attribution = &c
	}
	return out
}

// sendReplay sends the views of the history's days through the page-view path of collect,
// each with its day, a view ID of that day and a country, and returns how many it sent.
func (d *demo) sendReplay(ctx context.Context, site model.Website, views []demoView, now time.Time) (int, error) {
	set, err := d.store.RUMSettings(ctx, site.Account, site.ID)
	if err != nil {
		return 0, err
	}
	pages, err := d.store.Pages(ctx, site)
	if err != nil {
		return 0, err
	}
	target := rum.NewSite(site, set, pages)
	rng := rand.New(rand.NewPCG(5, 11))
	byDay := map[int][]rum.View{}
	for _, v := range views {
		if v.daysAgo >= DemoHistoryDays {
			continue
		}
		dayStart := now.AddDate(0, 0, -v.daysAgo).Truncate(24 * time.Hour)
		at := dayStart.Add(time.Duration(rng.Int64N(int64(24 * time.Hour))))
		if at.After(now) {
			at = now.Add(-time.Duration(rng.Int64N(int64(time.Hour))))
		}
		b := v.beacon
		b.ID = rum.NewViewID(at)
		view, err := target.View(b, rum.Request{UserAgent: v.userAgent, Day: at.Format("20060102"), Country: demoCountry(rng)})
		if err != nil {
			return 0, fmt.Errorf("a replayed page view of %s: %w", v.path, err)
		}
		byDay[v.daysAgo] = append(byDay[v.daysAgo], view)
	}
	sent := 0
	for _, day := range byDay {
		if err := d.beacons.Add(ctx, site.Account, site.ID, day...); err != nil {
			return sent, err
		}
		sent += len(day)
	}
	return sent, nil
}

func demoCountry(rng *rand.Rand) string {
	total := 0
	for _, c := range demoCountries {
		total += c.share
	}
	n := rng.IntN(total)
	for _, c := range demoCountries {
		if n < c.share {
			return c.code
		}
		n -= c.share
	}
	return "XX"
}

// addUX stores each page's user-experience records of the history's days and today on each
// device, as the ux worker stores what the dataset answers: each day's the 28 days of views
// up to it, p75 and the shares of good, needs-improvement and poor views of each vital.
func (d *demo) addUX(ctx context.Context, site model.Website, pages []model.Page, views []demoView, now time.Time) error {
	for _, p := range pages {
		for _, device := range metrics.Devices {
			for i := 0; i <= DemoHistoryDays; i++ {
				values := map[string][]float64{}
				for _, v := range views {
					if v.device == device && v.path == p.URL && v.daysAgo >= i && v.daysAgo < i+uxWindowDays {
						for _, vital := range rum.Vitals {
							if x, ok := v.beacon.Metrics[vital.Name]; ok {
								values[vital.Name] = append(values[vital.Name], x)
							}
						}
					}
				}
				ux := model.UXResult{Device: device, Day: now.AddDate(0, 0, -i).Format(model.DayLayout), Collected: now, Vitals: map[string]model.Vital{}}
				for _, vital := range rum.Vitals {
					if xs := values[vital.Name]; len(xs) > 0 {
						ux.Vitals[vital.Name] = uxVital(vital, xs)
					}
				}
				if err := d.store.PutUXResult(ctx, site, p, ux); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// uxVital is a vital's record over values: the 75th percentile (nearest rank; CLS to two
// decimals as the dataset gives it, times in whole milliseconds) and the shares of each rating
// in percent.
func uxVital(vital rum.Vital, values []float64) model.Vital {
	xs := slices.Sorted(slices.Values(values))
	p75 := xs[int(math.Ceil(0.75*float64(len(xs))))-1]
	if vital.Name == "cls" {
		p75 = math.Round(p75*100) / 100
	} else {
		p75 = math.Round(p75)
	}
	var rated [3]int
	for _, x := range xs {
		rated[vital.Rate(x)]++
	}
	share := func(n int) float64 { return math.Round(1000*float64(n)/float64(len(xs))) / 10 }
	return model.Vital{P75: p75, Good: share(rated[0]), NeedsImprovement: share(rated[1]), Poor: share(rated[2])}
}
