package api

import (
	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
)

// The metric fields of each kind of item, by their interface names.
var (
	// pageFields are the lab metrics of a page with metrics (timeline items and latest).
	pageFields = []string{"fcp", "lcp", "cls", "tbt", "ttfb", "speed_index",
		"performance_score", "accessibility_score", "best_practices_score", "seo_score", "kb_total", "cpu_total"}
	// timelineFields are the metrics of a timeline day item: every lab metric, scores
	// included, so that a chart over any range needs this one request.
	timelineFields = []string{"fcp", "lcp", "speed_index", "tbt", "ttfb", "tti", "cls",
		"dns_time", "connect_time", "server_time", "transfer_time", "dom_ready", "on_load", "dom_elements", "dom_max_depth",
		"performance_score", "accessibility_score", "best_practices_score", "seo_score", "kb_total", "cpu_total", "opportunities"}
	// networkFields are the byte counts of a network day item.
	networkFields = []string{"bytes_total", "bytes_doc", "bytes_image", "bytes_js", "bytes_css",
		"bytes_font", "bytes_media", "bytes_other", "bytes_thirdparty"}
	// searchFields are the search analytics fields of a page with metrics.
	searchFields = []string{"impressions", "clicks", "CTR", "position"}
)

// metricsJSON renders the given fields of vals, null where a field was not measured.
func metricsJSON(fields []string, vals metrics.Values) map[string]any {
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

// number is a value as JSON: an integer for every field but the decimal ones.
func number(field string, v float64) any {
	if decimal(field) {
		return v
	}
	return int64(v)
}

// decimal tells the fields shown with decimals (cls, ux_cls and CTR); the others are whole
// numbers.
func decimal(field string) bool { return field == "cls" || field == "ux_cls" || field == "CTR" }

// pageMetricsJSON renders the lab fields of a page with metrics, with the budgets its values
// on device exceed and are at risk of.
func pageMetricsJSON(budgets []model.Budget, device string, vals metrics.Values) map[string]any {
	m := metricsJSON(pageFields, vals)
	m["budgets_exceeded"], m["budgets_at_risk"] = budget.Count(budgets, device, vals.Get)
	m["opportunities"] = int64(vals["opportunities"])
	return m
}

// latestUXJSON renders the page detail's latestUx: one object per vital with data, and the
// assessment (null without one). It is nil without a record.
func latestUXJSON(p model.Page, device string, ux *metrics.UXSummary) map[string]any {
	if ux == nil {
		return nil
	}
	out := map[string]any{"id": p.ID, "device": device, "passed": nil}
	for name, v := range ux.Vitals {
		out[name] = map[string]any{
			"value":  number("ux_"+name, v.P75),
			"green":  v.Good,
			"yellow": v.NeedsImprovement,
			"red":    v.Poor,
		}
	}
	if ux.Passed != nil {
		out["passed"] = *ux.Passed
	}
	return out
}
