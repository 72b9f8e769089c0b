// Package budget decides whether measured values keep to performance budgets, and reports the
// status of a website's budgets against its pages' latest values.
package budget

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
)

// Range is the values a metric can take, and so the thresholds a budget on it may have: a
// threshold outside it could never be kept or exceeded, and a number beyond it may lie
// outside DynamoDB's range (1e-130 to 1e126 in magnitude).
type Range struct {
	Min, Max float64
	// Unit says what the numbers count, for messages.
	Unit string
}

// The ranges of the metrics' kinds.
var (
	timeRange  = Range{0, 24 * 60 * 60 * 1000, "milliseconds (up to a day)"}
	scoreRange = Range{0, 100, "points"}
	shiftRange = Range{0, 10, "(layout shift score)"}
	kbRange    = Range{0, 1e9, "kilobytes"}
	bytesRange = Range{0, 1e12, "bytes"}
	countRange = Range{0, 1e9, ""}
)

// Metric is a metric a budget may watch.
type Metric struct {
	Name  string
	Range Range
	// NoData, when set, says why the metric never has data: a budget on it is refused.
	NoData string
}

// catalogue declares every metric a budget may watch, with its range: the lab metrics of a
// page (including the timeline and network fields) and the user-experience dataset's ux_*
// fields.
var catalogue = []Metric{
	{Name: "fcp", Range: timeRange}, {Name: "lcp", Range: timeRange}, {Name: "cls", Range: shiftRange},
	{Name: "tbt", Range: timeRange}, {Name: "ttfb", Range: timeRange}, {Name: "tti", Range: timeRange},
	{Name: "speed_index", Range: timeRange},
	{Name: "performance_score", Range: scoreRange}, {Name: "accessibility_score", Range: scoreRange},
	{Name: "best_practices_score", Range: scoreRange}, {Name: "seo_score", Range: scoreRange},
	{Name: "kb_total", Range: kbRange}, {Name: "cpu_total", Range: timeRange},
	{Name: "opportunities", Range: countRange}, {Name: "validation_errors", Range: countRange},
	{Name: "dom_elements", Range: countRange}, {Name: "dom_max_depth", Range: countRange},
	{Name: "dns_time", Range: timeRange}, {Name: "connect_time", Range: timeRange},
	{Name: "server_time", Range: timeRange}, {Name: "transfer_time", Range: timeRange},
	{Name: "dom_ready", Range: timeRange}, {Name: "on_load", Range: timeRange},
	{Name: "bytes_total", Range: bytesRange}, {Name: "bytes_doc", Range: bytesRange},
	{Name: "bytes_image", Range: bytesRange}, {Name: "bytes_js", Range: bytesRange},
	{Name: "bytes_css", Range: bytesRange}, {Name: "bytes_font", Range: bytesRange},
	{Name: "bytes_media", Range: bytesRange}, {Name: "bytes_other", Range: bytesRange},
	{Name: "bytes_thirdparty", Range: bytesRange},
	{Name: "ux_lcp", Range: timeRange},
	{Name: "ux_fid", Range: timeRange, NoData: "the user-experience dataset no longer reports First Input Delay " +
		"(Interaction to Next Paint replaced it), so a budget on ux_fid would never have data: use ux_inp"},
	{Name: "ux_cls", Range: shiftRange}, {Name: "ux_fcp", Range: timeRange}, {Name: "ux_ttfb", Range: timeRange},
	{Name: "ux_inp", Range: timeRange},
}

// Metrics are the names of the metrics a budget may watch, in the catalogue's order.
var Metrics = func() []string {
	names := make([]string, len(catalogue))
	for i, m := range catalogue {
		names[i] = m.Name
	}
	return names
}()

// Lookup returns the metric of a name; false for a name no budget may watch.
func Lookup(name string) (Metric, bool) {
	for _, m := range catalogue {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// MinMagnitude is the smallest non-zero threshold: finer values mean nothing for any metric,
// and the tiniest cannot be stored.
const MinMagnitude = 1e-6

// CheckThreshold says what is wrong with a threshold for the metric, "" when nothing is.
func (m Metric) CheckThreshold(v float64) string {
	r := m.Range
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "must be a finite number"
	case v < r.Min || v > r.Max:
		return strings.TrimSpace(fmt.Sprintf("must be from %s to %s %s for %s", num(r.Min), num(r.Max), r.Unit, m.Name))
	case v != 0 && math.Abs(v) < MinMagnitude:
		return fmt.Sprintf("must be 0 or at least %s", num(MinMagnitude))
	}
	return ""
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

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

// Judge is the status of one page on device against b, values being its latest: ok when b
// does not cover the device or its metric was not measured.
func Judge(b model.Budget, device string, values map[string]float64) string {
	v, ok := values[b.Metric]
	if !ok || !AppliesTo(b.Device, device) {
		return OK
	}
	return Status(b.Operator, b.Value, v)
}

// Basis is what a budget's statuses are judged against: its metric, operator, threshold and
// device. Statuses judged against another basis (the budget was changed since) are judged
// again.
func Basis(b model.Budget) string {
	return strings.Join([]string{b.Metric, b.Operator, strconv.FormatFloat(b.Value, 'g', -1, 64), b.Device}, " ")
}

// Tallied is the status of a budget from the tally of its pages and devices off it by status:
// as bad as the worst of them, ok without any.
func Tallied(tally map[string]int) string {
	switch {
	case tally[Exceeded] > 0:
		return Exceeded
	case tally[AtRisk] > 0:
		return AtRisk
	}
	return OK
}

// Off is how many pages and devices a tally has off its budget.
func Off(tally map[string]int) int { return tally[Exceeded] + tally[AtRisk] }

// Count counts the budgets that the values measured on device (as value gives them) exceed and
// are at risk of. A budget
// whose metric was not measured counts as neither.
func Count(budgets []model.Budget, device string, value func(metric string) (float64, bool)) (exceeded, atRisk int) {
	for _, b := range budgets {
		v, ok := value(b.Metric)
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
	Budget model.Budget
	Status string
	Pages  []PageStatus // never nil
	// Methods are the measurement methods (model.MethodApplied, model.MethodSimulated) of the
	// lab values judged, sorted; none for a budget of another source's metric.
	Methods []string
}

// PageStatus is one page on one device against a budget.
type PageStatus struct {
	Page   model.Page
	Device string
	Status string
}

// Measured is the latest values of one page on one device.
type Measured struct {
	Page   model.Page
	Device string
	Values map[string]float64
}

// Evaluate reports each budget, in order, against the latest values of every page and device
// it covers, in the order of measured.
func Evaluate(budgets []model.Budget, measured []Measured) []Report {
	out := make([]Report, len(budgets))
	for i, b := range budgets {
		r := Report{Budget: b, Status: OK, Pages: []PageStatus{}}
		for _, m := range measured {
			if method := MethodOf(b, m.Device, m.Values); method != "" && !slices.Contains(r.Methods, method) {
				r.Methods = append(r.Methods, method)
			}
			if st := Judge(b, m.Device, m.Values); st != OK {
				r.Status = Worse(r.Status, st)
				r.Pages = append(r.Pages, PageStatus{Page: m.Page, Device: m.Device, Status: st})
			}
		}
		slices.Sort(r.Methods)
		out[i] = r
	}
	return out
}

// MethodOf is the measurement method of the value values give b on device: "" when b does not
// cover the device, its metric was not measured or is not a lab metric, or the values do not
// say.
func MethodOf(b model.Budget, device string, values map[string]float64) string {
	if _, ok := values[b.Metric]; !ok || !AppliesTo(b.Device, device) || !metrics.IsLab(b.Metric) {
		return ""
	}
	return metrics.Values(values).Method()
}

// Lister reads a website's budgets; *store.Store is one.
type Lister interface {
	Budgets(ctx context.Context, w model.Website) ([]model.Budget, error)
}

// ListingReader reads the recent values of a website's pages; *metrics.Reader is one.
type ListingReader interface {
	Listings(ctx context.Context, w model.Website, after string, limit int) ([]metrics.Listing, bool, error)
}

// Checker reports the status of websites' budgets.
type Checker struct {
	budgets  Lister
	listings ListingReader
}

// NewChecker returns a Checker reading budgets from budgets and pages' values from listings.
func NewChecker(budgets Lister, listings ListingReader) *Checker {
	return &Checker{budgets: budgets, listings: listings}
}

// Website reports each of a website's budgets against its pages' latest values. It reads no
// values when there is no budget.
func (c *Checker) Website(ctx context.Context, w model.Website) ([]Report, error) {
	budgets, err := c.budgets.Budgets(ctx, w)
	if err != nil {
		return nil, err
	}
	return c.Reports(ctx, w, budgets)
}

// Reports reports budgets, in order, against the latest values of every page of a website
// (all of its pages' rows). It reads no values when there is no budget.
func (c *Checker) Reports(ctx context.Context, w model.Website, budgets []model.Budget) ([]Report, error) {
	if len(budgets) == 0 {
		return []Report{}, nil
	}
	listings, _, err := c.listings.Listings(ctx, w, "", 0)
	if err != nil {
		return nil, err
	}
	measured := make([]Measured, len(listings))
	for i, l := range listings {
		measured[i] = Measured{Page: l.Page, Device: l.Device, Values: l.Latest()}
	}
	return Evaluate(budgets, measured), nil
}
