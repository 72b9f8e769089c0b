package regression

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
)

// History is how many days of a series a day's evaluation reads.
const History = 60

// Diagnostics reads the diagnostics of the audit whose report is stored at reportKey
// (model.ErrNotFound when it kept none); *artifact.Store is one.
type Diagnostics interface {
	Diagnostics(ctx context.Context, reportKey string) (*model.Diagnostics, error)
}

// Watcher evaluates a website's series after new results: it records the changes found (with
// the cause of a lab regression), the recoveries, and their events.
type Watcher struct {
	store       *store.Store
	diagnostics Diagnostics
	events      *event.Recorder
	now         func() time.Time
	log         *slog.Logger
	// bySubject holds the websites (account and ID) known to keep their regressions by page
	// and test, so that a worker evaluating many pages of one website stored before makes the
	// copies once, not once a page.
	bySubject sync.Map
}

// NewWatcher returns a Watcher over the table and the audits' diagnostics (nil: lab
// regressions are recorded without their cause), recording events with events (nil: none).
func NewWatcher(st *store.Store, diagnostics Diagnostics, events *event.Recorder, log *slog.Logger) *Watcher {
	return &Watcher{store: st, diagnostics: diagnostics, events: events, now: time.Now, log: log}
}

// SetClock makes the watcher's today now's (tests replay days).
func (w *Watcher) SetClock(now func() time.Time) { w.now = now }

// series is one watched series of a website: what it is about and its days.
type series struct {
	source, page, device, test, metric string
	// method is the measurement method of a lab series' days ("" for other sources).
	method string
	days   []Day
}

func (s series) key() string {
	return s.source + "\x00" + s.page + "\x00" + s.device + "\x00" + s.test + "\x00" + s.metric
}

// Lab evaluates a page's lab series on one device, after the day's audit was stored.
func (w *Watcher) Lab(ctx context.Context, site model.Website, page model.Page, device string) error {
	today := w.now().UTC()
	results, err := w.store.LabResults(ctx, site, page.ID, device, model.Day(today.AddDate(0, 0, -History)), model.Day(today))
	if err != nil {
		return err
	}
	results, method := sinceMethod(results)
	byDay := map[string]model.LabResult{}
	for _, r := range results {
		byDay[r.Day] = r
	}
	var all []series
	for _, metric := range SourceMetrics[SourceLab] {
		s := series{source: SourceLab, page: page.ID, device: device, metric: metric, method: method}
		for _, r := range results {
			v := r.Samples[metric]
			if len(v) == 0 { // a result stored before every run's values were kept
				if m, ok := r.Metrics[metric]; ok {
					v = []float64{m}
				}
			}
			if len(v) > 0 {
				s.days = append(s.days, Day{Day: r.Day, Values: v})
			}
		}
		all = append(all, s)
	}
	return w.evaluate(ctx, site, model.RegressionFilter{Page: page.ID}, all, func(ctx context.Context, r *model.Regression) error {
		before, after := byDay[r.LastGood], byDay[r.FirstBad]
		cause, err := w.labCause(ctx, before, after, r.Metric)
		if err != nil {
			// The regression stands without its cause (a report may have been purged).
			w.log.WarnContext(ctx, "regression cause", "website", site.ID, "page", page.ID, "err", err)
		}
		r.Cause = cause
		return nil
	})
}

// sinceMethod keeps the results (in day order) measured by the newest one's method since it
// was last switched, and names that method: a switch of method shifts every metric's level
// (applied throttling measures a slower load than simulation models), which is the method's,
// never the page's. Comparing only one method's results makes the switch a new baseline, so
// it is never reported as a regression or an improvement; the annotation of the switch says
// why the chart jumps.
func sinceMethod(results []model.LabResult) ([]model.LabResult, string) {
	if len(results) == 0 {
		return results, ""
	}
	method := model.MethodOr(results[len(results)-1].Method, "")
	from := len(results) - 1
	for from > 0 && model.MethodOr(results[from-1].Method, "") == method {
		from--
	}
	return results[from:], method
}

// UX evaluates a page's user-experience series (the dataset's daily p75) on one device.
func (w *Watcher) UX(ctx context.Context, site model.Website, page, device string) error {
	today := w.now().UTC()
	results, err := w.store.UXResults(ctx, site, page, device, model.Day(today.AddDate(0, 0, -History)), model.Day(today))
	if err != nil {
		return err
	}
	var all []series
	for _, metric := range SourceMetrics[SourceUX] {
		s := series{source: SourceUX, page: page, device: device, metric: metric}
		for _, r := range results {
			if v, ok := r.Vitals[metric]; ok {
				s.days = append(s.days, Day{Day: r.Day, Values: []float64{v.P75}})
			}
		}
		all = append(all, s)
	}
	return w.evaluate(ctx, site, model.RegressionFilter{Page: page}, all, nil)
}

// UXWeekly evaluates a page's history in the user-experience dataset on one device: a series
// of one value a collection period, which the daily detector takes as it takes one value a
// day (its days are the periods; a change lasts MinSegment periods, three weeks, before it is
// reported, dated by the last day of its first period). Its periods overlap by three weeks,
// so a step shows as a ramp of four periods, which the detector fits as one line.
func (w *Watcher) UXWeekly(ctx context.Context, site model.Website, page, device string) error {
	h, err := w.store.UXHistory(ctx, site, page, device)
	if model.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var all []series
	for _, metric := range SourceMetrics[SourceUXWeekly] {
		s := series{source: SourceUXWeekly, page: page, device: device, metric: metric}
		for _, p := range h.Periods {
			if v, ok := p.Vitals[metric]; ok && p.Last != "" {
				s.days = append(s.days, Day{Day: p.Last, Values: []float64{v.P75}})
			}
		}
		all = append(all, s)
	}
	return w.evaluate(ctx, site, model.RegressionFilter{Page: page}, all, nil)
}

// RUMReports answers real-user reports; *rum.Reader is one.
type RUMReports interface {
	Report(ctx context.Context, q rum.Query) (rum.Report, error)
}

// RUMDays is how many whole days of real-user data a website's evaluation reads (as many as
// every series: a drift or a moderate step needs them, see Daily), and MinRUMViews how many
// page views a page needs in a day for that day to count: a p75 of a handful of views is noise.
const (
	RUMDays     = History
	MinRUMViews = 50
)

// RUM evaluates the real-user series of a website's pages: each page's daily p75 of the web
// vitals over the whole days before today (the ux worker calls it with the website's daily
// collection). A page's day with fewer than MinRUMViews views is left out.
func (w *Watcher) RUM(ctx context.Context, site model.Website, reports RUMReports) error {
	pages, err := w.store.Pages(ctx, site)
	if err != nil {
		return err
	}
	byKey := map[string]model.Page{}
	for _, p := range pages {
		if key, _, err := rum.PageKey("https://" + site.Domain + p.URL); err == nil {
			byKey[key] = p
		}
	}
	metrics := SourceMetrics[SourceRUM]
	days := map[string]map[string][]Day{} // page ID, metric: days
	today := w.now().UTC().Truncate(24 * time.Hour)
	for back := RUMDays; back >= 1; back-- {
		day := today.AddDate(0, 0, -back)
		rep, err := reports.Report(ctx, rum.Query{Account: site.Account, Website: site.ID, Dim: rum.DimPages, Metrics: metrics, From: day, To: day})
		if err != nil {
			return err
		}
		for _, row := range rep.Rows {
			p, ok := byKey[row.Key]
			if !ok || row.Views < MinRUMViews {
				continue
			}
			if days[p.ID] == nil {
				days[p.ID] = map[string][]Day{}
			}
			for metric, v := range row.P75 {
				days[p.ID][metric] = append(days[p.ID][metric], Day{Day: model.Day(day), Values: []float64{v}, Count: int(row.Views)})
			}
		}
	}
	var all []series
	for page, byMetric := range days {
		for _, metric := range metrics {
			all = append(all, series{source: SourceRUM, page: page, metric: metric, days: byMetric[metric]})
		}
	}
	return w.evaluate(ctx, site, model.RegressionFilter{}, all, nil)
}

// Test evaluates a multistep test's series (every completed run's values, by day).
func (w *Watcher) Test(ctx context.Context, site model.Website, t model.Test) error {
	runs, err := w.store.Runs(ctx, site, t.ID, w.now().UTC().AddDate(0, 0, -History), 0)
	if err != nil {
		return err
	}
	var all []series
	for _, metric := range SourceMetrics[SourceMultistep] {
		all = append(all, series{source: SourceMultistep, test: t.ID, device: t.Device, metric: metric, days: RunDays(runs, metric)})
	}
	return w.evaluate(ctx, site, model.RegressionFilter{Test: t.ID}, all, nil)
}

// RunDays is a test's series of one metric: the values of its completed runs by UTC day of
// their start, oldest first (failed runs measure nothing comparable).
func RunDays(runs []model.Run, metric string) []Day {
	runs = slices.Clone(runs)
	slices.SortFunc(runs, func(a, b model.Run) int { return a.Created.Compare(b.Created) })
	var days []Day
	for _, r := range runs {
		if r.Status != model.RunCompleted {
			continue
		}
		v := map[string]*float64{"duration": r.Duration, "inp": r.INP, "tbt": r.TBT, "cls": r.CLS}[metric]
		if v == nil {
			continue
		}
		day := model.Day(r.Created)
		if n := len(days); n > 0 && days[n-1].Day == day {
			days[n-1].Values = append(days[n-1].Values, *v)
		} else {
			days = append(days, Day{Day: day, Values: []float64{*v}})
		}
	}
	return days
}

// evaluate runs the detector on each series with what is recorded of it, and records what it
// finds; explain, when not nil, adds the cause to a new regression. f reads the recorded
// regressions of every series' page or test (all sources and devices): a new regression joins
// the incident of its page or test that began within a day of it. The events are the
// incidents': one for the incidents that gained a regression or recovered.
//
// A page's or test's regressions are one query of its own copies of them, whatever the
// number of the website's others.
func (w *Watcher) evaluate(ctx context.Context, site model.Website, f model.RegressionFilter, all []series,
	explain func(context.Context, *model.Regression) error) error {
	thresholds, err := w.thresholds(ctx, site)
	if err != nil {
		return err
	}
	if f.Page != "" || f.Test != "" {
		site.RegressionsBySubject = site.RegressionsBySubject || w.knownBySubject(site)
		if site, err = w.store.EnsureRegressionsBySubject(ctx, site); err != nil {
			return err
		}
		w.bySubject.Store(site.Account+"/"+site.ID, true)
	}
	recorded, _, err := w.store.Regressions(ctx, site, f, "", 0)
	if err != nil {
		return err
	}
	var errs []error
	touched := map[string]bool{} // regression IDs whose incident's event may be owed
	for _, s := range all {
		m, _ := Lookup(s.metric)
		known, open := knownOf(recorded, s)
		out := Evaluate(s.source, s.days, known, thresholds.For(s.metric), m.HigherIsWorse)
		if out.Recovered != "" && open != nil {
			ok, err := w.store.RecoverRegression(ctx, site, open.ID, out.Recovered)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			open.Status, open.Recovered = model.RegressionRecovered, out.Recovered
			if ok {
				w.log.InfoContext(ctx, "regression recovered", "website", site.ID, "regression", open.ID, "since", out.Recovered)
			}
			touched[open.ID] = true
		}
		if out.Change == nil {
			continue
		}
		r := newRegression(site, s, *out.Change, w.now())
		r.Incident = incidentOf(site, Incidents(site, recorded), r)
		if r.Kind == model.KindRegression && explain != nil {
			errs = append(errs, explain(ctx, &r))
		}
		created, err := w.store.PutRegression(ctx, site, r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !created { // found again (a redelivered message): its events may be owed
			if r, err = w.store.Regression(ctx, site, r.ID); err != nil {
				errs = append(errs, err)
				continue
			}
		} else {
			w.log.InfoContext(ctx, "change of level found", "website", site.ID, "regression", r.ID, "incident", r.Incident, "kind", r.Kind,
				"metric", r.Metric, "page", r.Page, "test", r.Test, "device", r.Device, "percent", r.Percent, "p", r.P)
		}
		if i := slices.IndexFunc(recorded, func(x model.Regression) bool { return x.ID == r.ID }); i >= 0 {
			recorded[i] = r
		} else {
			recorded = append(recorded, r)
		}
		touched[r.ID] = true
	}
	for _, in := range Incidents(site, recorded) {
		if slices.ContainsFunc(in.Members, func(r model.Regression) bool { return touched[r.ID] }) {
			errs = append(errs, w.record(ctx, site, in))
		}
	}
	return errors.Join(errs...)
}

// knownBySubject tells whether site was seen keeping its regressions by page and test.
func (w *Watcher) knownBySubject(site model.Website) bool {
	_, ok := w.bySubject.Load(site.Account + "/" + site.ID)
	return ok
}

// record records an incident's state and its event.
func (w *Watcher) record(ctx context.Context, site model.Website, in model.Incident) error {
	if w.events == nil {
		return nil
	}
	err := w.events.Incident(ctx, site, in, Unit)
	if model.IsNotFound(err) { // the page or test is gone meanwhile
		return nil
	}
	return err
}

// Unit is a metric's unit ("" for none or an unknown metric).
func Unit(metric string) string {
	m, _ := Lookup(metric)
	return m.Unit
}

// thresholds are the website's least changes over the defaults.
func (w *Watcher) thresholds(ctx context.Context, site model.Website) (Thresholds, error) {
	own, err := w.store.RegressionThresholds(ctx, site)
	if err != nil {
		return nil, err
	}
	t := Thresholds{}
	for name, th := range own {
		t[name] = Threshold{Relative: th.Relative, Absolute: th.Absolute}
	}
	return t, nil
}

// knownOf is what is recorded of series s among a website's regressions: the newest open (or
// acknowledged) regression, and where the current level began.
func knownOf(recorded []model.Regression, s series) (Known, *model.Regression) {
	var k Known
	var open *model.Regression
	for i := range recorded {
		r := &recorded[i]
		if r.Source != s.source || r.Page != s.page || r.Device != s.device || r.Test != s.test || r.Metric != s.metric {
			continue
		}
		if s.source == SourceLab && model.MethodOr(r.Method, "") != s.method {
			// Of another method's results: its level is not this series', which can neither
			// recover it nor extend it (it stays as it is until acknowledged).
			continue
		}
		k.Since = max(k.Since, r.FirstBad, r.Recovered)
		if r.Kind == model.KindRegression && r.Status != model.RegressionRecovered && (open == nil || r.FirstBad > open.FirstBad) {
			open = r
		}
	}
	if open != nil {
		k.Open = &Change{LastGood: open.LastGood, FirstBad: open.FirstBad,
			Before: Level(open.Before), After: Level(open.After), Delta: open.Delta, Percent: open.Percent, P: open.P, Worse: true}
	}
	return k, open
}

func newRegression(site model.Website, s series, c Change, now time.Time) model.Regression {
	r := model.Regression{
		ID:     model.RegressionID(site, s.key(), c.FirstBad),
		Kind:   model.KindImprovement,
		Source: s.source, Page: s.page, Device: s.device, Test: s.test, Metric: s.metric, Method: s.method,
		LastGood: c.LastGood, FirstBad: c.FirstBad,
		Before: model.Level(c.Before), After: model.Level(c.After),
		Delta: c.Delta, Percent: c.Percent, P: c.P,
		Status: model.RegressionOpen, Detected: now.UTC(),
		Days: dayMedians(s.days, c.FirstBad),
	}
	if c.Worse {
		r.Kind = model.KindRegression
	}
	return r
}
