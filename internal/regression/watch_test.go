package regression_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

type watchEnv struct {
	t       *testing.T
	store   *store.Store
	site    model.Website
	pages   []model.Page
	watcher *regression.Watcher
	today   time.Time
}

var day0 = time.Date(2026, 10, 1, 4, 0, 0, 0, time.UTC)

func newWatchEnv(t *testing.T) *watchEnv {
	env := awstest.NewEnv(t)
	site, pages := env.Website(model.Website{Account: "acme", Domain: "example.com"}, model.Page{URL: "/"}, model.Page{URL: "/shop"})
	q := env.Queue(service.NotifyQueueSettings)
	e := &watchEnv{t: t, store: env.Store, site: site, pages: pages, today: day0}
	e.watcher = regression.NewWatcher(env.Store, artifact.New(env.Bucket()), event.NewRecorder(env.Store, notify.NewQueue(q), env.Log), env.Log)
	e.watcher.SetClock(func() time.Time { return e.today })
	return e
}

// lab stores a day's lab result of page (desktop) with three runs around lcp, then evaluates
// its series as the audit worker does.
func (e *watchEnv) lab(rng *rand.Rand, page model.Page, day int, lcp float64) {
	e.t.Helper()
	e.labBy(rng, page, day, lcp, "")
}

// labBy is lab with the result measured by method ("": stored before methods).
func (e *watchEnv) labBy(rng *rand.Rand, page model.Page, day int, lcp float64, method string) {
	e.t.Helper()
	e.today = day0.AddDate(0, 0, day)
	runs := []float64{lcp * (1 + 0.02*rng.NormFloat64()), lcp * (1 + 0.02*rng.NormFloat64()), lcp * (1 + 0.02*rng.NormFloat64())}
	res := model.LabResult{Device: "desktop", Day: model.Day(e.today), Audited: e.today, Runs: 3, Method: method,
		Metrics: map[string]float64{"lcp": runs[1], "performance_score": 90}, Samples: map[string][]float64{"lcp": runs, "performance_score": {90, 90, 90}}}
	if err := e.store.PutLabResult(context.Background(), e.site, page, res); err != nil {
		e.t.Fatal(err)
	}
	if err := e.watcher.Lab(context.Background(), e.site, page, "desktop"); err != nil {
		e.t.Fatal(err)
	}
}

// ux stores a day's user-experience result of the second page (mobile) with vitals, then
// evaluates its series as the ux worker does.
func (e *watchEnv) ux(day int, vitals map[string]model.Vital) {
	e.t.Helper()
	e.today = day0.AddDate(0, 0, day)
	r := model.UXResult{Device: "mobile", Day: model.Day(e.today), Collected: e.today, Vitals: vitals}
	if err := e.store.PutUXResult(context.Background(), e.site, e.pages[1], r); err != nil {
		e.t.Fatal(err)
	}
	if err := e.watcher.UX(context.Background(), e.site, e.pages[1].ID, "mobile"); err != nil {
		e.t.Fatal(err)
	}
}

// uxDays stores and evaluates the page's user-experience values of days 0 to days-1, one day
// after another, vitals giving each day's, and returns the days a regression was found on
// (the website's grew in number).
func (e *watchEnv) uxDays(days int, vitals func(day int) map[string]model.Vital) (found []int) {
	e.t.Helper()
	for d := range days {
		e.ux(d, vitals(d))
		if n := len(e.regressions(model.RegressionFilter{})); n > len(found) {
			found = append(found, d)
		}
	}
	return found
}

func (e *watchEnv) regressions(f model.RegressionFilter) []model.Regression {
	e.t.Helper()
	regs, _, err := e.store.Regressions(context.Background(), e.site, f, "", 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return regs
}

func (e *watchEnv) events() []model.Event {
	e.t.Helper()
	evs, _, err := e.store.Events(context.Background(), e.site, model.EventFilter{}, "", 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

// TestWatcherLab plays a page's daily audits: 15 quiet days, a 40 % LCP step that does not
// count while the website's own threshold is above it, and counts from its first day under the
// defaults (without a cause: no report is stored), then back to the old level: recovered on the
// third day back, with an event each time.
func TestWatcherLab(t *testing.T) {
	e := newWatchEnv(t)
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	if err := e.store.PutRegressionThresholds(ctx, e.site, map[string]model.RegressionThreshold{"lcp": {Relative: 0.5, Absolute: 100}}); err != nil {
		t.Fatal(err)
	}
	for d := range 15 {
		e.lab(rng, e.pages[0], d, 1500)
	}
	for d := 15; d <= 17; d++ {
		e.lab(rng, e.pages[0], d, 2100)
		if regs := e.regressions(model.RegressionFilter{}); len(regs) != 0 {
			t.Fatalf("day %d: a 40 %% step counted under the website's 50 %% threshold: %+v", d, regs)
		}
	}
	// Back to the defaults (10 % and 100 ms): the step, three days old, counts from its
	// first day.
	if err := e.store.PutRegressionThresholds(ctx, e.site, map[string]model.RegressionThreshold{}); err != nil {
		t.Fatal(err)
	}
	if err := e.watcher.Lab(ctx, e.site, e.pages[0], "desktop"); err != nil {
		t.Fatal(err)
	}
	regs := e.regressions(model.RegressionFilter{})
	if len(regs) != 1 {
		t.Fatalf("regressions %+v, want the LCP step", regs)
	}
	r := regs[0]
	if r.Kind != model.KindRegression || r.Source != regression.SourceLab || r.Metric != "lcp" || r.FirstBad != model.Day(day0.AddDate(0, 0, 15)) ||
		r.Status != model.RegressionOpen || r.Percent < 30 || r.Percent > 50 || r.P >= 0.001 || len(r.Cause) != 0 {
		t.Fatalf("regression %+v", r)
	}
	// The same day evaluated again (a redelivered message) records nothing more.
	if err := e.watcher.Lab(ctx, e.site, e.pages[0], "desktop"); err != nil {
		t.Fatal(err)
	}
	if n := len(e.regressions(model.RegressionFilter{})); n != 1 {
		t.Fatalf("%d regressions after a redelivery", n)
	}
	for d := 18; d <= 19; d++ {
		e.lab(rng, e.pages[0], d, 1500)
		if r := e.regressions(model.RegressionFilter{})[0]; r.Status != model.RegressionOpen {
			t.Fatalf("recovered after %d days back: %+v", d-17, r)
		}
	}
	e.lab(rng, e.pages[0], 20, 1500)
	regs = e.regressions(model.RegressionFilter{})
	if len(regs) != 1 || regs[0].Status != model.RegressionRecovered || regs[0].Recovered != model.Day(day0.AddDate(0, 0, 18)) {
		t.Fatalf("regressions %+v, want the step recovered from day 18 (and no improvement for the way back)", regs)
	}
	evs := e.events()
	if len(evs) != 2 || evs[0].Type != event.RegressionRecovered || evs[1].Type != event.RegressionDetected || evs[0].Regression != r.ID {
		t.Fatalf("events %+v, want detected then recovered", evs)
	}
	if !strings.HasPrefix(evs[1].Summary, "Regression of / from 2026-10-16: LCP 1,") || !strings.Contains(evs[1].Summary, " ms (+") ||
		!strings.HasSuffix(evs[1].Summary, "%, desktop, simulated throttling)") || evs[1].Incident != r.Incident || r.Incident == "" {
		t.Errorf("event %+v does not name the page by its URL, the levels with their unit and the incident %q", evs[1], r.Incident)
	}
	if len(r.Days) < 15 || r.Days[len(r.Days)-1].Day != r.FirstBad && r.Days[len(r.Days)-1].Day < r.FirstBad {
		t.Errorf("the regression keeps %d days for its chart: %+v", len(r.Days), r.Days)
	}
}

// TestWatcherMethodSwitch: a page's results by simulation (stored before methods, then
// saying so), then by applied throttling 60 % slower, as a switch of method shifts every
// level: no regression and no event, on the day of the switch or the ten after. The same shift
// within one method (the other page, applied throughout) is a regression, named with its
// method in its event; that page switching to simulation afterwards, back at the old level,
// neither recovers it nor finds anything new.
func TestWatcherMethodSwitch(t *testing.T) {
	e := newWatchEnv(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for d := range 20 {
		method := model.MethodSimulated
		if d < 10 {
			method = "" // stored before methods: simulated
		}
		e.labBy(rng, e.pages[0], d, 1500, method)
		e.labBy(rng, e.pages[1], d, 1500, model.MethodApplied)
	}
	for d := 20; d < 31; d++ {
		e.labBy(rng, e.pages[0], d, 2400, model.MethodApplied)
	}
	if regs := e.regressions(model.RegressionFilter{}); len(regs) != 0 {
		t.Fatalf("a switch of method reported: %+v", regs)
	}
	for d := 20; d < 24; d++ {
		e.labBy(rng, e.pages[1], d, 2400, model.MethodApplied)
	}
	regs := e.regressions(model.RegressionFilter{})
	if len(regs) != 1 || regs[0].Page != e.pages[1].ID || regs[0].Metric != "lcp" || regs[0].Kind != model.KindRegression || regs[0].Method != model.MethodApplied {
		t.Fatalf("regressions %+v, want the LCP step of the page measured by one method", regs)
	}
	evs := e.events()
	if len(evs) != 1 || !strings.HasSuffix(evs[0].Summary, "%, desktop, applied throttling)") {
		t.Errorf("events %+v, want one naming the device and the method", evs)
	}
	// That page switches to simulation, whose values are back at the old level: the method's
	// doing, not a recovery; the regression stays open, and nothing else is found.
	for d := 24; d < 30; d++ {
		e.labBy(rng, e.pages[1], d, 1500, model.MethodSimulated)
	}
	if regs := e.regressions(model.RegressionFilter{}); len(regs) != 1 || regs[0].Status != model.RegressionOpen {
		t.Errorf("after switching the regressed page: %+v, want its regression open still", regs)
	}
	if evs := e.events(); len(evs) != 1 {
		t.Errorf("events after switching the regressed page: %+v", evs)
	}
}

// TestWatcherIncident: one change of a page moves LCP and the score on both devices, each
// device's audit evaluated on its own: four regressions, one incident, one event naming both
// metrics and devices; the way back is one recovery event once every one recovered.
func TestWatcherIncident(t *testing.T) {
	e := newWatchEnv(t)
	rng := rand.New(rand.NewPCG(9, 10))
	ctx := context.Background()
	page := e.pages[0]
	audit := func(d int, lcp, score float64) {
		t.Helper()
		e.today = day0.AddDate(0, 0, d)
		for _, device := range []string{"desktop", "mobile"} {
			runs := func(v float64) []float64 {
				return []float64{v * (1 + 0.02*rng.NormFloat64()), v * (1 + 0.02*rng.NormFloat64()), v * (1 + 0.02*rng.NormFloat64())}
			}
			l, s := runs(lcp), runs(score)
			res := model.LabResult{Device: device, Day: model.Day(e.today), Audited: e.today, Runs: 3,
				Metrics: map[string]float64{"lcp": l[1], "performance_score": s[1]}, Samples: map[string][]float64{"lcp": l, "performance_score": s}}
			if err := e.store.PutLabResult(ctx, e.site, page, res); err != nil {
				t.Fatal(err)
			}
			if err := e.watcher.Lab(ctx, e.site, page, device); err != nil {
				t.Fatal(err)
			}
		}
	}
	for d := range 15 {
		audit(d, 1500, 92)
	}
	for d := 15; d <= 18; d++ {
		audit(d, 2400, 70)
	}
	regs := e.regressions(model.RegressionFilter{})
	if len(regs) != 4 {
		t.Fatalf("regressions %+v, want LCP and the score on both devices", regs)
	}
	for _, r := range regs {
		if r.Incident == "" || r.Incident != regs[0].Incident || r.Kind != model.KindRegression {
			t.Fatalf("regression %+v is not of incident %q", r, regs[0].Incident)
		}
	}
	incidents := regression.Incidents(e.site, regs)
	if len(incidents) != 1 || len(incidents[0].Members) != 4 || incidents[0].State() != model.IncidentOpen {
		t.Fatalf("incidents %+v, want one open of four", incidents)
	}
	evs := e.events()
	if len(evs) != 1 || evs[0].Type != event.RegressionDetected || evs[0].Incident != regs[0].Incident {
		t.Fatalf("events %+v, want one regression.detected of the incident", evs)
	}
	// The event recorded with the first device's changes; the notifier sends the incident as
	// it is after notify.IncidentGather, with both devices.
	summary := event.IncidentSummary(incidents[0], "/", regression.Unit)
	for _, want := range []string{"LCP 1,", " ms (+", "Performance 9", "desktop, mobile, simulated throttling)"} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary %q does not say %q", summary, want)
		}
	}
	for d := 19; d <= 22; d++ {
		audit(d, 1500, 92)
	}
	regs = e.regressions(model.RegressionFilter{})
	if in := regression.Incidents(e.site, regs); len(regs) != 4 || len(in) != 1 || in[0].State() != model.IncidentResolved {
		t.Fatalf("regressions %+v, want the four recovered (no improvement for the way back)", regs)
	}
	evs = e.events()
	if len(evs) != 2 || evs[0].Type != event.RegressionRecovered || evs[0].Incident != regs[0].Incident {
		t.Fatalf("events %+v, want one recovery after the detection", evs)
	}
}

// TestWatcherUX: the user-experience dataset's daily p75 (one value a day) counts a change
// after three days at the new level.
func TestWatcherUX(t *testing.T) {
	e := newWatchEnv(t)
	rng := rand.New(rand.NewPCG(3, 4))
	found := e.uxDays(28, func(d int) map[string]model.Vital {
		p75 := 2000.0
		if d >= 20 {
			p75 = 2600
		}
		return map[string]model.Vital{"lcp": {P75: p75 + 10*rng.NormFloat64()}, "cls": {P75: 0.05}}
	})
	regs := e.regressions(model.RegressionFilter{Page: e.pages[1].ID})
	if len(regs) != 1 || regs[0].Source != regression.SourceUX || regs[0].Metric != "lcp" || regs[0].FirstBad != model.Day(day0.AddDate(0, 0, 20)) {
		t.Fatalf("regressions %+v, want the p75 step of day 20", regs)
	}
	if len(found) != 1 || found[0] != 22 {
		t.Fatalf("found on day %v, want 22 (three values after the change)", found)
	}
}

// TestWatcherUXRamp: a page that got slower reaches the user-experience dataset's 28-day p75 as
// a 28-day ramp; the watcher, evaluating each day's value as it comes, records one regression,
// from the ramp's first day, and its incident's event once.
func TestWatcherUXRamp(t *testing.T) {
	e := newWatchEnv(t)
	rng := rand.New(rand.NewPCG(5, 28))
	found := e.uxDays(90, func(d int) map[string]model.Vital {
		p75 := 2000 + 500*min(max(float64(d-40+1)/28, 0), 1)
		return map[string]model.Vital{"lcp": {P75: float64(int(p75 + 3*rng.NormFloat64()))}}
	})
	regs := e.regressions(model.RegressionFilter{Page: e.pages[1].ID})
	if len(regs) != 1 || regs[0].Source != regression.SourceUX || regs[0].Metric != "lcp" || regs[0].FirstBad != model.Day(day0.AddDate(0, 0, 40)) ||
		regs[0].Kind != model.KindRegression {
		t.Fatalf("regressions %+v (found on days %v), want one from the ramp's first day, day 40", regs, found)
	}
	detected := 0
	for _, ev := range e.events() {
		if ev.Type == "regression.detected" {
			detected++
		}
	}
	if detected != 1 {
		t.Fatalf("%d regression.detected events, want 1", detected)
	}
}

// TestRunDays: a test's runs make one day of values a UTC day, oldest first; failed runs and
// runs without the metric are left out. A step of every run's duration is found.
func TestRunDays(t *testing.T) {
	ms := func(v float64) *float64 { return &v }
	var runs []model.Run
	rng := rand.New(rand.NewPCG(5, 6))
	midnight := day0.Truncate(24 * time.Hour)
	for d := range 20 {
		for h := range 4 { // four runs a day
			dur := 4000.0
			if d >= 16 {
				dur = 5200
			}
			r := model.Run{Created: midnight.AddDate(0, 0, d).Add(time.Duration(1+5*h) * time.Hour), Status: model.RunCompleted,
				Duration: ms(dur * (1 + 0.02*rng.NormFloat64()))}
			if h == 3 && d%5 == 0 {
				r.Status, r.Duration = model.RunFailed, ms(90000)
			}
			runs = append(runs, r)
		}
	}
	slices.Reverse(runs) // newest first, as the store lists them
	days := regression.RunDays(runs, "duration")
	if len(days) != 20 || days[0].Day != model.Day(day0) || len(days[0].Values) != 3 || len(days[1].Values) != 4 {
		t.Fatalf("days %d, first %+v, second %+v", len(days), days[0], days[1])
	}
	for _, d := range days {
		for _, v := range d.Values {
			if v > 10000 {
				t.Fatalf("a failed run's duration in the series: %+v", d)
			}
		}
	}
	if inp := regression.RunDays(runs, "inp"); len(inp) != 0 {
		t.Fatalf("inp series of runs without inp: %+v", inp)
	}
	d := regression.NewDetector()
	ch, ok := d.Detect(days, 0, regression.Thresholds{}.For("duration"), true)
	if !ok || ch.FirstBad != model.Day(day0.AddDate(0, 0, 16)) || !ch.Worse {
		t.Fatalf("duration step: %+v %v", ch, ok)
	}
}

// TestWatcherRUM folds four weeks of real users' page views through the aggregator: the home
// page's LCP p75 steps up for its last six days, a page with too few views a day and a path
// that is no page of the website are left out. The daily run's evaluation finds the step.
func TestWatcherRUM(t *testing.T) {
	e := newWatchEnv(t)
	rums := awstest.RUM(t, e.store)
	agg := rumworker.NewAggregatorWith(e.store, rums, quota.NewKeeper(e.store, time.Now), awstest.Log(t), geo.Country)
	rng := rand.New(rand.NewPCG(7, 8))
	e.today = time.Date(2026, 10, 29, 2, 0, 0, 0, time.UTC)
	for back := 28; back >= 1; back-- {
		day := model.Day(e.today.AddDate(0, 0, -back))
		var views []rum.View
		for i := range 80 {
			lcp := 1800.0
			if back <= 6 {
				lcp = 2600
			}
			page := "/"
			switch {
			case i%10 == 0:
				page = "/shop" // 8 views a day: too few
			case i%10 == 1:
				page = "/not-a-page"
			}
			views = append(views, rum.View{ID: rum.NewViewID(e.today.AddDate(0, 0, -back).Add(time.Duration(i) * time.Second)), Day: day, Page: page, Country: "DE",
				Metrics: map[string]float64{"lcp": lcp * (1 + 0.1*rng.NormFloat64()), "cls": 0.01}})
		}
		body, err := json.Marshal(rum.Batch{ID: "b" + day, Account: e.site.Account, Website: e.site.ID, Views: views})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := agg.HandleSQS(context.Background(), awstest.SQSEvent(string(body)))
		if err != nil || len(resp.BatchItemFailures) > 0 {
			t.Fatalf("fold %s: %v %v", day, err, resp.BatchItemFailures)
		}
	}
	if err := e.watcher.RUM(context.Background(), e.site, rum.NewReader(rums)); err != nil {
		t.Fatal(err)
	}
	regs := e.regressions(model.RegressionFilter{})
	if len(regs) != 1 {
		t.Fatalf("regressions %+v, want the home page's LCP step", regs)
	}
	r := regs[0]
	if r.Source != regression.SourceRUM || r.Page != e.pages[0].ID || r.Metric != "lcp" || r.Device != "" ||
		r.FirstBad != model.Day(e.today.AddDate(0, 0, -6)) || r.Percent < 30 {
		t.Fatalf("regression %+v", r)
	}
}

// TestWatcherWebsiteStoredBefore: a website whose open regression was stored before pages
// kept their own (no copy, the website unmarked) still has it found and recovered, once, by
// the page's evaluations after.
func TestWatcherWebsiteStoredBefore(t *testing.T) {
	e := newWatchEnv(t)
	rng := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	for d := range 15 {
		e.lab(rng, e.pages[0], d, 1500)
	}
	for d := 15; d <= 17; d++ {
		e.lab(rng, e.pages[0], d, 2100)
	}
	if regs := e.regressions(model.RegressionFilter{Page: e.pages[0].ID}); len(regs) != 1 || regs[0].Status != model.RegressionOpen {
		t.Fatalf("regressions %+v, want the LCP step open", regs)
	}
	// As an earlier version left it: the website's list only.
	table := awstest.TableOf(t, awstest.Clients(t), e.store)
	pk := awstest.WebsitePK(e.site.Account, e.site.ID)
	stored := table.Items(pk, "P#"+e.pages[0].ID+"#RG#")
	if len(stored) != 1 {
		t.Fatalf("the page's copies: %d", len(stored))
	}
	table.Delete(pk, stored[0]["SK"].(string))
	e.site.RegressionsBySubject = false
	e.watcher = regression.NewWatcher(e.store, artifact.New(awstest.Bucket(t)), nil, awstest.Log(t))
	e.watcher.SetClock(func() time.Time { return e.today })
	for d := 18; d <= 20; d++ {
		e.lab(rng, e.pages[0], d, 1500)
	}
	regs := e.regressions(model.RegressionFilter{})
	if len(regs) != 1 || regs[0].Status != model.RegressionRecovered {
		t.Fatalf("regressions %+v, want the step recovered, and no other", regs)
	}
	copies, _, err := e.store.Regressions(ctx, model.Website{Account: e.site.Account, ID: e.site.ID, RegressionsBySubject: true},
		model.RegressionFilter{Page: e.pages[0].ID}, "", 0)
	if err != nil || len(copies) != 1 || copies[0].Status != model.RegressionRecovered {
		t.Fatalf("the page's copy %+v (%v), want it recovered", copies, err)
	}
}
