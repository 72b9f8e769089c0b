package regression

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

// The windows of a field verdict: real users' daily p75 is compared over the RUMVerdictDays
// days from a lab incident's first bad day with as many days before; the user-experience
// dataset's, a 28-day rolling window, over the UXVerdictDays days it takes to turn over.
// VerdictMaxAge bounds how old an incident may be to get one (older ones, found before
// verdicts existed, are left alone rather than followed up weeks late).
const (
	RUMVerdictDays = 7
	UXVerdictDays  = 28
	VerdictMaxAge  = UXVerdictDays + 7
)

// minVerdictDays is the fewest days of real-user data on each side of a first bad day for its
// comparison to count.
const minVerdictDays = 3

// fieldMetric is the field metric a lab metric's change shows in, if any: the lab's blocking
// time shows in users' interactions, and the page's weight, requests, speed index and score in
// its largest paint.
var fieldMetric = map[string]string{
	"lcp": "lcp", "fcp": "fcp", "cls": "cls", "ttfb": "ttfb", "tbt": "inp",
	"speed_index": "lcp", "performance_score": "lcp", "kb_total": "lcp", "requests": "lcp",
}

// Verdicts decides the field verdicts of a website's incidents that are owed one, and records
// each once with its event (incident.verdict, the follow-up of the incident's detection). The
// ux worker calls it with the website's daily collection: its work is the website's incidents
// of the last VerdictMaxAge days, whatever the number of websites.
//
// A lab incident is confirmed in the field as soon as real users' p75 (over RUMVerdictDays) or
// the dataset's (over UXVerdictDays) moved its way beyond their noise, or a field regression
// joined it; not seen in the field once both windows closed with enough data in one; no field
// data when neither had any. A field incident without a lab change is not reproduced in the
// lab once RUMVerdictDays of the page's lab results after its first bad day show none.
func (w *Watcher) Verdicts(ctx context.Context, site model.Website, reports RUMReports) error {
	regs, _, err := w.store.Regressions(ctx, site, model.RegressionFilter{}, "", 0)
	if err != nil {
		return err
	}
	today := w.now().UTC().Truncate(24 * time.Hour)
	oldest := model.Day(today.AddDate(0, 0, -VerdictMaxAge))
	var owed []model.Incident
	for _, in := range Incidents(site, regs) {
		if in.Kind == model.KindRegression && in.Members[0].Page != "" && in.FirstBad() >= oldest {
			owed = append(owed, in)
		}
	}
	if len(owed) == 0 {
		return nil
	}
	decided, err := w.store.Verdicts(ctx, site)
	if err != nil {
		return err
	}
	thresholds, err := w.thresholds(ctx, site)
	if err != nil {
		return err
	}
	j := &judge{reads: w.store, site: site, all: regs, thresholds: thresholds, today: today, now: w.now,
		rum: &rumCache{reports: reports, site: site, days: map[string]map[string]rum.Row{}}}
	var errs []error
	for _, in := range owed {
		v, ok := decided[in.ID]
		if !ok {
			var err error
			v, ok, err = j.verdict(ctx, in)
			if err != nil {
				errs = append(errs, fmt.Errorf("verdict of %s: %w", in.ID, err))
				continue
			}
			if !ok {
				continue // not yet
			}
			if v, _, err = w.store.PutVerdict(ctx, site, in.FirstBad(), v); err != nil {
				errs = append(errs, err)
				continue
			}
			w.log.InfoContext(ctx, "field verdict", "website", site.ID, "incident", in.ID, "verdict", v.Verdict, "summary", v.Summary)
		}
		// Recorded again while its event may be unsent (a redelivery records nothing new).
		if w.events != nil {
			if err := w.events.Verdict(ctx, site, in, v); err != nil && !model.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// fieldReads are the store's reads a field verdict is decided from; *store.Store is one.
type fieldReads interface {
	LabResults(ctx context.Context, w model.Website, page, device, from, to string) ([]model.LabResult, error)
	UXResults(ctx context.Context, w model.Website, page, device, from, to string) ([]model.UXResult, error)
	Page(ctx context.Context, w model.Website, id string) (model.Page, error)
}

// judge decides the field verdicts of a website's incidents as of today: from the website's
// regressions (all), the lab results and dataset records the store reads, and real users'
// reports (rum), against the website's least changes (thresholds).
type judge struct {
	reads      fieldReads
	site       model.Website
	all        []model.Regression
	thresholds Thresholds
	rum        *rumCache
	// today is the day's midnight (UTC); now the time a verdict is decided at.
	today time.Time
	now   func() time.Time
}

// verdict decides one incident's verdict as of today; false when it is too early to say.
func (j *judge) verdict(ctx context.Context, in model.Incident) (model.Verdict, bool, error) {
	first, err := time.Parse(model.DayLayout, in.FirstBad())
	if err != nil {
		return model.Verdict{}, false, err
	}
	lead := Lead(in)
	v := model.Verdict{Incident: in.ID, Page: lead.Page, Device: lead.Device, Day: model.Day(j.today), Decided: j.now().UTC()}
	daysSince := int(j.today.Sub(first).Hours() / 24)
	if lead.Source != SourceLab {
		return j.labVerdict(ctx, in, v, first, daysSince)
	}
	// A field regression of the page that joined the incident is the field's own word.
	for _, r := range in.Members {
		if r.Source != SourceLab && r.Kind == model.KindRegression {
			v.Verdict = model.VerdictConfirmed
			v.Checks = append(v.Checks, model.VerdictCheck{Source: r.Source, Metric: r.Metric, Device: r.Device,
				From: r.LastGood, To: r.FirstBad, Before: r.Before.Median, After: r.After.Median, Enough: true, Moved: true})
			v.Summary = summary(v)
			return v, true, nil
		}
	}
	var metrics []string
	for _, r := range in.Members {
		if m, ok := fieldMetric[r.Metric]; ok && r.Source == SourceLab && !slices.Contains(metrics, m) {
			metrics = append(metrics, m)
		}
	}
	rumChecks, err := j.rumChecks(ctx, lead.Page, metrics, first)
	if err != nil {
		return v, false, err
	}
	uxChecks, err := j.uxChecks(ctx, lead.Page, lead.Device, metrics, first)
	if err != nil {
		return v, false, err
	}
	v.Checks = append(rumChecks, uxChecks...)
	enough := false
	for _, c := range v.Checks {
		if c.Moved {
			v.Verdict = model.VerdictConfirmed
			v.Checks = slices.DeleteFunc(v.Checks, func(c model.VerdictCheck) bool { return !c.Moved })
			v.Summary = summary(v)
			return v, true, nil
		}
		enough = enough || c.Enough
	}
	uxData := slices.ContainsFunc(uxChecks, func(c model.VerdictCheck) bool { return c.DaysBefore > 0 })
	switch {
	case daysSince < RUMVerdictDays:
		return v, false, nil
	case daysSince < UXVerdictDays && uxData:
		return v, false, nil // the dataset's window has not turned over yet
	case enough:
		v.Verdict = model.VerdictNotSeen
		v.Checks = slices.DeleteFunc(v.Checks, func(c model.VerdictCheck) bool { return !c.Enough })
	default:
		v.Verdict, v.Checks = model.VerdictNoFieldData, nil
	}
	v.Summary = summary(v)
	return v, true, nil
}

// labVerdict is a field incident's: not reproduced in the lab when the page's lab results of
// the RUMVerdictDays from its first bad day found no change within them; nothing to say
// without lab results, or when the lab changed (that incident gets the verdict).
func (j *judge) labVerdict(ctx context.Context, in model.Incident, v model.Verdict, first time.Time, daysSince int) (model.Verdict, bool, error) {
	if daysSince < RUMVerdictDays {
		return v, false, nil
	}
	from, to := model.Day(first.AddDate(0, 0, -RUMVerdictDays)), model.Day(first.AddDate(0, 0, RUMVerdictDays))
	for _, r := range j.all {
		if r.Source == SourceLab && r.Page == v.Page && r.FirstBad >= from && r.FirstBad <= to {
			return v, false, nil
		}
	}
	lead := Lead(in)
	devices := []string{"mobile", "desktop"}
	if lead.Device != "" {
		devices = []string{lead.Device}
	}
	for _, d := range devices {
		results, err := j.reads.LabResults(ctx, j.site, v.Page, d, model.Day(first), to)
		if err != nil {
			return v, false, err
		}
		if len(results) >= minVerdictDays {
			v.Verdict = model.VerdictNotReproduced
			v.Checks = []model.VerdictCheck{{Source: SourceLab, Metric: lead.Metric, Device: d, From: model.Day(first), To: results[len(results)-1].Day,
				DaysAfter: len(results), Enough: true}}
			v.Summary = fmt.Sprintf("Not reproduced in the lab: %d daily audits on %s since %s show no change of %s.",
				len(results), d, model.DayToISO(model.Day(first)), strings.ToUpper(lead.Metric))
			return v, true, nil
		}
	}
	return v, false, nil
}

// rumCache holds the real-user page reports of days read while deciding a website's verdicts:
// one report a day, whatever the number of incidents.
type rumCache struct {
	reports RUMReports
	site    model.Website
	days    map[string]map[string]rum.Row // day, page key
}

func (c *rumCache) day(ctx context.Context, day time.Time) (map[string]rum.Row, error) {
	key := model.Day(day)
	if rows, ok := c.days[key]; ok {
		return rows, nil
	}
	rep, err := c.reports.Report(ctx, rum.Query{Account: c.site.Account, Website: c.site.ID, Dim: rum.DimPages,
		Metrics: SourceMetrics[SourceRUM], From: day, To: day})
	if err != nil {
		return nil, err
	}
	rows := map[string]rum.Row{}
	for _, r := range rep.Rows {
		rows[r.Key] = r
	}
	c.days[key] = rows
	return rows, nil
}

// rumChecks compares real users' daily p75 of a page over the RUMVerdictDays before its first
// bad day and from it (the days known so far), for each metric. A day counts with
// MinRUMViews views.
func (j *judge) rumChecks(ctx context.Context, page string, metrics []string, first time.Time) ([]model.VerdictCheck, error) {
	c := j.rum
	if c.reports == nil {
		return nil, nil
	}
	p, err := j.reads.Page(ctx, j.site, page)
	if err != nil {
		return nil, err
	}
	key, _, err := rum.PageKey("https://" + c.site.Domain + p.URL)
	if err != nil {
		return nil, nil
	}
	before, after := map[string][]float64{}, map[string][]float64{}
	last := first
	for back := -RUMVerdictDays; back < RUMVerdictDays; back++ {
		day := first.AddDate(0, 0, back)
		if !day.Before(j.today) {
			break // only whole days
		}
		rows, err := c.day(ctx, day)
		if err != nil {
			return nil, err
		}
		row, ok := rows[key]
		if !ok || row.Views < MinRUMViews {
			continue
		}
		for _, m := range metrics {
			if v, ok := row.P75[m]; ok {
				if back < 0 {
					before[m] = append(before[m], v)
				} else {
					after[m] = append(after[m], v)
					last = day
				}
			}
		}
	}
	var out []model.VerdictCheck
	for _, m := range metrics {
		chk := model.VerdictCheck{Source: SourceRUM, Metric: m, From: model.Day(first.AddDate(0, 0, -RUMVerdictDays)), To: model.Day(last),
			DaysBefore: len(before[m]), DaysAfter: len(after[m])}
		if len(before[m]) > 0 && len(after[m]) > 0 {
			chk.Before, chk.After = median(before[m]), median(after[m])
			chk.Noise = max(2*iqr(before[m]), j.thresholds.For(m).least(chk.Before))
		}
		chk.Enough = len(before[m]) >= minVerdictDays && len(after[m]) >= minVerdictDays
		chk.Moved = chk.Enough && worse(m, chk.After-chk.Before) > chk.Noise
		out = append(out, chk)
	}
	return out, nil
}

// uxChecks compares the dataset's daily p75 of a page and device before its first bad day
// (the median of the last RUMVerdictDays records) with its newest record of the
// UXVerdictDays from it, by which the 28-day window holds only days after the change.
func (j *judge) uxChecks(ctx context.Context, page, device string, metrics []string, first time.Time) ([]model.VerdictCheck, error) {
	// The records known today, up to the window's end (a replayed day reads no later ones).
	to := min(model.Day(first.AddDate(0, 0, UXVerdictDays-1)), model.Day(j.today))
	results, err := j.reads.UXResults(ctx, j.site, page, device, model.Day(first.AddDate(0, 0, -RUMVerdictDays)), to)
	if err != nil {
		return nil, err
	}
	var out []model.VerdictCheck
	for _, m := range metrics {
		var before []float64
		var after *model.UXResult
		for i, r := range results {
			v, ok := r.Vitals[m]
			switch {
			case !ok:
			case r.Day < model.Day(first):
				before = append(before, v.P75)
			default:
				after = &results[i]
			}
		}
		chk := model.VerdictCheck{Source: SourceUX, Metric: m, Device: device, From: model.Day(first.AddDate(0, 0, -RUMVerdictDays)), DaysBefore: len(before)}
		if len(before) > 0 && after != nil {
			chk.Before, chk.After, chk.To = median(before), after.Vitals[m].P75, after.Day
			days, _ := time.Parse(model.DayLayout, after.Day)
			chk.DaysAfter = int(days.Sub(first).Hours()/24) + 1
			chk.Noise = max(2*iqr(before), j.thresholds.For(m).least(chk.Before))
			// Enough once the window turned over, or today is past it with the newest record.
			chk.Enough = chk.DaysAfter >= UXVerdictDays || !j.today.Before(first.AddDate(0, 0, UXVerdictDays))
			chk.Moved = worse(m, chk.After-chk.Before) > chk.Noise
		}
		out = append(out, chk)
	}
	return out, nil
}

// worse is a change of metric signed so that a worsening is positive.
func worse(metric string, delta float64) float64 {
	if m, ok := Lookup(metric); ok && !m.HigherIsWorse {
		return -delta
	}
	return delta
}

// iqr is the interquartile range of values.
func iqr(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return quantile(s, 0.75) - quantile(s, 0.25)
}

// summary says a verdict in one sentence, with its numbers.
func summary(v model.Verdict) string {
	var head string
	switch v.Verdict {
	case model.VerdictConfirmed:
		head = "Confirmed in the field"
	case model.VerdictNotSeen:
		head = "Not seen in the field"
	case model.VerdictNoFieldData:
		return "No field data: neither real-user monitoring nor the user-experience dataset had enough data for this page around the change."
	}
	var parts []string
	for _, c := range v.Checks {
		unit := Unit(c.Metric)
		who := "real users' p75"
		if c.Source == SourceUX {
			who = "the user-experience dataset's p75 (" + c.Device + ")"
		} else if c.Source != SourceRUM {
			who = c.Source + " p75"
		}
		pct := ""
		if c.Before != 0 {
			pct = fmt.Sprintf(", %+.0f %%", 100*(c.After-c.Before)/math.Abs(c.Before))
		}
		noise := ""
		if c.Noise > 0 {
			noise = fmt.Sprintf("; noise %s", num(c.Noise, unit))
		}
		parts = append(parts, fmt.Sprintf("%s %s %s → %s%s%s", who, strings.ToUpper(c.Metric), num(c.Before, unit), num(c.After, unit), pct, noise))
	}
	return head + ": " + strings.Join(parts, "; ") + "."
}

// num writes a value with its unit.
func num(v float64, unit string) string {
	switch unit {
	case "":
		return fmt.Sprintf("%.3g", v)
	case "ms":
		return fmt.Sprintf("%.0f ms", v)
	}
	return fmt.Sprintf("%.0f %s", v, unit)
}
