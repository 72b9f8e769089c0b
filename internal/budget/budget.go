// Package budget decides whether measured values keep to performance budgets, and reports the
// status of a website's budgets against its pages' latest values.
package budget

import (
	"context"
	"math"
	"strings"

	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/store"
)

// Metrics are the metrics a budget may watch: the lab metrics of a page (including the
// timeline and network fields) and the user-experience dataset's ux_* fields.
var Metrics = []string{
	"fcp", "lcp", "cls", "tbt", "ttfb", "tti", "speed_index",
	"performance_score", "accessibility_score", "best_practices_score", "seo_score",
	"kb_total", "cpu_total", "opportunities", "validation_errors",
	"dom_elements", "dom_max_depth", "dns_time", "connect_time", "server_time", "transfer_time",
	"dom_ready", "on_load",
	"bytes_total", "bytes_doc", "bytes_image", "bytes_js", "bytes_css", "bytes_font",
	"bytes_media", "bytes_other", "bytes_thirdparty",
	"ux_lcp", "ux_fid", "ux_cls", "ux_fcp", "ux_ttfb", "ux_inp",
}

// Operators are a budget's operators: lt wants values below the threshold, gt above it.
var Operators = []string{"lt", "gt"}

// Devices are the devices a budget may cover; all covers both.
var Devices = []string{"desktop", "mobile", "all"}

// The statuses of a budget, or of one page and device against it, worst last.
const (
	OK       = "ok"
	AtRisk   = "at-risk"
	Exceeded = "exceeded"
)

// RiskMargin is how close to its threshold a value is at risk: within 10% of the threshold.
const RiskMargin = 0.10

// Status judges a measured value against a budget: operator "lt" wants the value below the
// threshold, "gt" above it. A value that fails the operator exceeds the budget; one that keeps
// to it but lies within 10% of the threshold is at risk; anything else is ok.
func Status(operator string, threshold, value float64) string {
	margin := math.Abs(threshold) * RiskMargin
	switch operator {
	case "lt":
		switch {
		case !(value < threshold):
			return Exceeded
		case value >= threshold-margin:
			return AtRisk
		}
	case "gt":
		switch {
		case !(value > threshold):
			return Exceeded
		case value <= threshold+margin:
			return AtRisk
		}
	}
	return OK
}

// Worse returns the worse of two statuses.
func Worse(a, b string) string {
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func rank(s string) int {
	switch s {
	case Exceeded:
		return 2
	case AtRisk:
		return 1
	}
	return 0
}

// AppliesTo tells whether a budget for device ("desktop", "mobile" or "all") covers a result
// measured on measured.
func AppliesTo(device, measured string) bool { return device == "all" || device == measured }

// Count counts the budgets that values measured on device exceed and are at risk of. A budget
// whose metric was not measured counts as neither.
func Count(budgets []store.Budget, device string, vals map[string]float64) (exceeded, atRisk int) {
	for _, b := range budgets {
		v, ok := vals[b.Metric]
		if !ok || !AppliesTo(b.Device, device) {
			continue
		}
		switch Status(b.Operator, b.Value, v) {
		case Exceeded:
			exceeded++
		case AtRisk:
			atRisk++
		}
	}
	return exceeded, atRisk
}

// Report is the status of one budget: as bad as its worst page and device, with the pages and
// devices that are not ok.
type Report struct {
	Budget store.Budget
	Status string
	Pages  []PageStatus // never nil
}

// PageStatus is one page on one device against a budget.
type PageStatus struct {
	Page   store.Page
	Device string
	Status string
}

// Measured is the latest values of one page on one device.
type Measured struct {
	Page   store.Page
	Device string
	Values map[string]float64
}

// Evaluate reports each budget, in order, against the latest values of every page and device
// it covers, in the order of measured.
func Evaluate(budgets []store.Budget, measured []Measured) []Report {
	out := make([]Report, len(budgets))
	for i, b := range budgets {
		r := Report{Budget: b, Status: OK, Pages: []PageStatus{}}
		for _, m := range measured {
			v, ok := m.Values[b.Metric]
			if !ok || !AppliesTo(b.Device, m.Device) {
				continue
			}
			if st := Status(b.Operator, b.Value, v); st != OK {
				r.Status = Worse(r.Status, st)
				r.Pages = append(r.Pages, PageStatus{Page: m.Page, Device: m.Device, Status: st})
			}
		}
		out[i] = r
	}
	return out
}

// Lister reads a website's budgets; *store.Store is one.
type Lister interface {
	Budgets(ctx context.Context, w store.Website) ([]store.Budget, error)
}

// SeriesReader reads the recent results of a website's pages; *metrics.Reader is one.
type SeriesReader interface {
	Website(ctx context.Context, w store.Website, inc metrics.Include) ([]metrics.Series, error)
}

// Checker reports the status of websites' budgets.
type Checker struct {
	budgets Lister
	series  SeriesReader
}

// NewChecker returns a Checker reading budgets from budgets and results from series.
func NewChecker(budgets Lister, series SeriesReader) *Checker {
	return &Checker{budgets: budgets, series: series}
}

// Website reports each of a website's budgets against its pages' latest values. It reads no
// results when there is no budget, and user-experience records only for a budget on a ux_*
// field.
func (c *Checker) Website(ctx context.Context, w store.Website) ([]Report, error) {
	budgets, err := c.budgets.Budgets(ctx, w)
	if err != nil {
		return nil, err
	}
	if len(budgets) == 0 {
		return []Report{}, nil
	}
	series, err := c.series.Website(ctx, w, metrics.Include{UX: watchesUX(budgets)})
	if err != nil {
		return nil, err
	}
	measured := make([]Measured, len(series))
	for i, s := range series {
		measured[i] = Measured{Page: s.Page, Device: s.Device, Values: s.Latest()}
	}
	return Evaluate(budgets, measured), nil
}

// watchesUX tells whether any budget watches a ux_* field, which needs the user-experience
// records.
func watchesUX(budgets []store.Budget) bool {
	for _, b := range budgets {
		if strings.HasPrefix(b.Metric, "ux_") {
			return true
		}
	}
	return false
}
