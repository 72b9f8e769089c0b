package api

import (
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/openvitals/openvitals/internal/store"
)

// Field data (the user-experience dataset and search analytics) is served by the lab
// endpoints: the pages list adds the ux_* and search fields to each day and to latest, and
// the page detail adds latestUx. This file reads and renders them.

// uxVitals are the vitals the user-experience dataset gives, by their interface names. fid is
// not among them: the dataset no longer has First Input Delay, so ux_fid is never invented.
var uxVitals = []string{"lcp", "inp", "cls", "fcp", "ttfb"}

// Good thresholds of the core web vitals at the 75th percentile.
const (
	goodLCP = 2500 // ms
	goodINP = 200  // ms
	goodCLS = 0.1
)

// searchFields are the search analytics fields of a page with metrics.
var searchFields = []string{"impressions", "clicks", "CTR", "position"}

// readField fills in the user-experience records (and, with search, the search analytics) of
// labs from day from to day to, a few queries at a time. Search analytics are per page, not
// per device: they are read once per page and shared by its devices.
func (s *Server) readField(ctx context.Context, site store.Website, labs []pageLab, from, to time.Time, search bool) error {
	var wg sync.WaitGroup
	errs := make([]error, len(labs))
	sem := make(chan struct{}, 8)
	first := map[string]int{} // page ID: the index of its first pageLab, which reads its search analytics
	for i := len(labs) - 1; i >= 0; i-- {
		first[labs[i].page.ID] = i
	}
	for i := range labs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			l := &labs[i]
			l.ux, errs[i] = s.store.UXResults(ctx, site, l.page.ID, l.device, store.Day(from), store.Day(to))
			if errs[i] == nil && search && first[l.page.ID] == i {
				l.search, errs[i] = s.store.SearchResults(ctx, site, l.page.ID, store.Day(from), store.Day(to))
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for i := range labs {
		labs[i].search = labs[first[labs[i].page.ID]].search
	}
	return nil
}

// recentField reads the field data of the last 30 days into labs.
func (s *Server) recentField(ctx context.Context, site store.Website, labs []pageLab, search bool) error {
	today := s.now()
	return s.readField(ctx, site, labs, today.AddDate(0, 0, -(pagesWindowDays-1)), today, search)
}

// hasSearchAnalytics tells whether a website has the Search Console integration: only then do
// its pages show the search fields.
func (s *Server) hasSearchAnalytics(ctx context.Context, site store.Website) (bool, error) {
	_, err := s.store.SearchConsole(ctx, site)
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// uxValues are a record's 75th percentiles as ux_* fields, rounded.
func uxValues(r store.UXResult) map[string]float64 {
	out := make(map[string]float64, len(r.Vitals))
	for name, v := range r.Vitals {
		if slices.Contains(uxVitals, name) {
			out["ux_"+name] = rounded("ux_"+name, v.P75)
		}
	}
	return out
}

// searchValues are a page's search analytics as the interface names them. Without impressions
// there is neither a click-through rate nor a position.
func searchValues(r store.SearchResult) map[string]float64 {
	out := map[string]float64{"impressions": math.Round(r.Impressions), "clicks": math.Round(r.Clicks)}
	if r.Impressions > 0 {
		out["CTR"] = rounded("CTR", r.Clicks/r.Impressions*100)
		out["position"] = math.Round(r.Position)
	}
	return out
}

// uxPassed is the core web vitals assessment of ux_* values: LCP, INP and CLS all good at the
// 75th percentile, LCP and CLS alone when INP has no data. Without LCP or CLS there is no
// assessment (ok is false).
func uxPassed(vals map[string]float64) (passed, ok bool) {
	lcp, hasLCP := vals["ux_lcp"]
	cls, hasCLS := vals["ux_cls"]
	if !hasLCP || !hasCLS {
		return false, false
	}
	passed = lcp <= goodLCP && cls <= goodCLS
	if inp, hasINP := vals["ux_inp"]; hasINP {
		passed = passed && inp <= goodINP
	}
	return passed, true
}

// fieldDay is what a page has on one device and day: a lab result, a user-experience record,
// search analytics, or several of them.
type fieldDay struct {
	day    string
	lab    *store.LabResult
	ux     *store.UXResult
	search *store.SearchResult
}

// days merges a page's results by day, oldest first.
func (l pageLab) days() []fieldDay {
	byDay := map[string]*fieldDay{}
	at := func(day string) *fieldDay {
		d, ok := byDay[day]
		if !ok {
			d = &fieldDay{day: day}
			byDay[day] = d
		}
		return d
	}
	for i := range l.results {
		at(l.results[i].Day).lab = &l.results[i]
	}
	for i := range l.ux {
		at(l.ux[i].Day).ux = &l.ux[i]
	}
	for i := range l.search {
		at(l.search[i].Day).search = &l.search[i]
	}
	out := make([]fieldDay, 0, len(byDay))
	for _, day := range slices.Sorted(maps.Keys(byDay)) {
		out = append(out, *byDay[day])
	}
	return out
}

// values are a day's lab, ux_* and search values together.
func (d fieldDay) values() map[string]float64 {
	vals := map[string]float64{}
	if d.lab != nil {
		maps.Copy(vals, values(*d.lab))
	}
	if d.ux != nil {
		maps.Copy(vals, uxValues(*d.ux))
	}
	if d.search != nil {
		maps.Copy(vals, searchValues(*d.search))
	}
	return vals
}

// latestValues are a page's latest values on a device: the lab metrics, the ux_* fields and
// the search fields each averaged over their own last 3 days present. It is nil when the page
// has none of them.
func (l pageLab) latestValues() map[string]float64 {
	ux := make([]map[string]float64, len(l.ux))
	for i, r := range l.ux {
		ux[i] = uxValues(r)
	}
	search := make([]map[string]float64, len(l.search))
	for i, r := range l.search {
		search[i] = searchValues(r)
	}
	if len(l.results) == 0 && len(ux) == 0 && len(search) == 0 {
		return nil
	}
	vals := map[string]float64{}
	for _, m := range []map[string]float64{mean(l.results), meanOf(ux), meanOf(search)} {
		maps.Copy(vals, m)
	}
	return vals
}

// pageDayJSON renders the metric fields of a page with metrics (a timeline day or latest):
// the lab fields (null where not measured; opportunities too on a day without a lab result),
// the budget counts over every value, the ux_* fields the dataset has data for, and, for a
// website with search analytics, the four search fields (null where not collected).
func pageDayJSON(budgets []store.Budget, device string, vals map[string]float64, search bool) map[string]any {
	m := pageMetricsJSON(budgets, device, vals)
	if _, ok := vals["opportunities"]; !ok {
		m["opportunities"] = nil
	}
	for _, name := range uxVitals {
		if v, ok := vals["ux_"+name]; ok {
			m["ux_"+name] = number("ux_"+name, v)
		}
	}
	if passed, ok := uxPassed(vals); ok {
		m["ux_passed"] = 0
		if passed {
			m["ux_passed"] = 1
		}
	}
	if search {
		maps.Copy(m, metricsJSON(searchFields, vals))
	}
	return m
}

// pageWithMetrics renders one page on one device of the pages list: one timeline item per day
// with any result, and latest.
func pageWithMetrics(budgets []store.Budget, l pageLab, search bool) map[string]any {
	days := l.days()
	timeline := make([]map[string]any, len(days))
	for i, d := range days {
		timeline[i] = pageDayJSON(budgets, l.device, d.values(), search)
		timeline[i]["date"] = store.DayToISO(d.day)
	}
	var latest any
	if vals := l.latestValues(); vals != nil {
		latest = pageDayJSON(budgets, l.device, vals, search)
	}
	return map[string]any{
		"id": l.page.ID, "alias": l.page.Alias, "url": l.page.URL, "device": l.device,
		"timeline": timeline, "latest": latest,
	}
}

// latestUX renders the page detail's latestUx: each vital's 75th percentile and shares
// averaged over the last 3 records present, and the assessment of those values. It is nil
// without a record.
func latestUX(p store.Page, device string, rs []store.UXResult) map[string]any {
	if len(rs) == 0 {
		return nil
	}
	rs = rs[max(0, len(rs)-latestDays):]
	out := map[string]any{"id": p.ID, "device": device}
	vals := map[string]float64{}
	for _, name := range uxVitals {
		var sum store.Vital
		n := 0.0
		for _, r := range rs {
			if v, ok := r.Vitals[name]; ok {
				sum.P75 += rounded("ux_"+name, v.P75)
				sum.Good += v.Good
				sum.NeedsImprovement += v.NeedsImprovement
				sum.Poor += v.Poor
				n++
			}
		}
		if n == 0 {
			continue
		}
		field := "ux_" + name
		vals[field] = rounded(field, sum.P75/n)
		out[name] = map[string]any{
			"value":  number(field, vals[field]),
			"green":  percent(sum.Good / n),
			"yellow": percent(sum.NeedsImprovement / n),
			"red":    percent(sum.Poor / n),
		}
	}
	out["passed"] = nil
	if passed, ok := uxPassed(vals); ok {
		out["passed"] = passed
	}
	return out
}

// percent rounds a share in percent to two decimals.
func percent(v float64) float64 { return math.Round(v*100) / 100 }

// hasUXBudget tells whether any budget watches a ux_* field, which the budget status then
// needs the user-experience records for.
func hasUXBudget(budgets []store.Budget) bool {
	return slices.ContainsFunc(budgets, func(b store.Budget) bool { return strings.HasPrefix(b.Metric, "ux_") })
}
