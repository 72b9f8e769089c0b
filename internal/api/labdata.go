package api

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/store"
)

// The lab fields of each kind of item, by their interface names.
var (
	// pageFields are the metrics of a page with metrics (timeline items and latest).
	pageFields = []string{"fcp", "lcp", "cls", "tbt", "ttfb", "speed_index",
		"performance_score", "accessibility_score", "best_practices_score", "seo_score", "kb_total", "cpu_total"}
	// timelineFields are the metrics of a timeline day item.
	timelineFields = []string{"fcp", "lcp", "speed_index", "tbt", "ttfb", "tti", "cls",
		"dns_time", "connect_time", "server_time", "transfer_time", "dom_ready", "on_load", "dom_elements", "dom_max_depth"}
	// networkFields are the byte counts of a network day item.
	networkFields = []string{"bytes_total", "bytes_doc", "bytes_image", "bytes_js", "bytes_css",
		"bytes_font", "bytes_media", "bytes_other", "bytes_thirdparty"}
)

// latestDays is how many of the most recent days present "latest" averages.
const latestDays = 3

// labDevices are the devices pages are audited on.
var labDevices = []string{"desktop", "mobile"}

// rounded gives a field's value as the interface shows it: cls and ux_cls to four decimals,
// CTR (percent) to two, everything else a whole number. Budgets are judged on these values, so that what a budget reports
// matches what the client sees.
func rounded(field string, v float64) float64 {
	switch field {
	case "cls", "ux_cls":
		return math.Round(v*10000) / 10000
	case "CTR":
		return math.Round(v*100) / 100
	}
	return math.Round(v)
}

// values is a result's measured values, rounded, with the opportunity count.
func values(r store.LabResult) map[string]float64 {
	out := make(map[string]float64, len(r.Metrics)+1)
	for k, v := range r.Metrics {
		out[k] = rounded(k, v)
	}
	out["opportunities"] = float64(len(r.Opportunities))
	return out
}

// mean averages the most recent latestDays results (oldest first in rs), field by field over
// the results that have the field. It is nil when there is no result.
func mean(rs []store.LabResult) map[string]float64 {
	days := make([]map[string]float64, len(rs))
	for i, r := range rs {
		days[i] = values(r)
	}
	return meanOf(days)
}

// meanOf averages the most recent latestDays of days' values (oldest first), field by field
// over the days that have the field. It is nil when there is no day.
func meanOf(days []map[string]float64) map[string]float64 {
	if len(days) == 0 {
		return nil
	}
	days = days[max(0, len(days)-latestDays):]
	sums, counts := map[string]float64{}, map[string]int{}
	for _, day := range days {
		for k, v := range day {
			sums[k] += v
			counts[k]++
		}
	}
	out := make(map[string]float64, len(sums))
	for k, sum := range sums {
		out[k] = rounded(k, sum/float64(counts[k]))
	}
	return out
}

// budgetCounts counts the budgets that measured values on device exceed or are at risk of.
func budgetCounts(budgets []store.Budget, device string, vals map[string]float64) (exceeded, atRisk int) {
	for _, b := range budgets {
		v, ok := vals[b.Metric]
		if !ok || !budget.AppliesTo(b.Device, device) {
			continue
		}
		switch budget.Status(b.Operator, b.Value, v) {
		case budget.Exceeded:
			exceeded++
		case budget.AtRisk:
			atRisk++
		}
	}
	return exceeded, atRisk
}

// metricsJSON renders the given fields of vals, null where a field was not measured.
func metricsJSON(fields []string, vals map[string]float64) map[string]any {
	out := make(map[string]any, len(fields)+4)
	for _, f := range fields {
		if v, ok := vals[f]; ok {
			out[f] = number(f, v)
		} else {
			out[f] = nil
		}
	}
	return out
}

// number is a value as JSON: an integer for every field but cls and CTR.
func number(field string, v float64) any {
	if field == "cls" || field == "ux_cls" || field == "CTR" {
		return v
	}
	return int64(v)
}

// pageLab is one page on one device with its results in a range of days, oldest first: lab
// results, and user-experience records and search analytics once readField has read them.
type pageLab struct {
	page    store.Page
	device  string
	results []store.LabResult
	ux      []store.UXResult
	search  []store.SearchResult
}

// labResults reads the results of pages on devices from day from to day to, a few queries at
// a time.
func (s *Server) labResults(ctx context.Context, w store.Website, pages []store.Page, devices []string, from, to time.Time) ([]pageLab, error) {
	out := make([]pageLab, 0, len(pages)*len(devices))
	for _, p := range pages {
		for _, d := range devices {
			out = append(out, pageLab{page: p, device: d})
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(out))
	sem := make(chan struct{}, 8)
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i].results, errs[i] = s.store.LabResults(ctx, w, out[i].page.ID, out[i].device, store.Day(from), store.Day(to))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
