package lighthouse

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// Report holds what openvitals keeps from one Lighthouse 13.5 result (LHR). The fields'
// comments name where in the LHR each comes from (docs/api.md has them all in one table).
//
// A metric that Lighthouse left out or null (an errored audit, a runtime error, an insight that
// did not apply) is a nil pointer and its name is in Missing, never a silent 0: a 0 ms LCP would
// be averaged into a page's "latest" values and pass every budget.
type Report struct {
	// LighthouseVersion is the lhr's lighthouseVersion, e.g. "13.5.0".
	LighthouseVersion string
	// RequestedURL is the URL Lighthouse was asked to audit.
	RequestedURL string
	// FinalURL is the URL shown at the end of the load (lhr.finalDisplayedUrl), falling back to
	// the main document's URL when Lighthouse did not record one (e.g. a runtime error).
	FinalURL string
	// FetchTime is when Lighthouse started the run; zero if absent.
	FetchTime time.Time
	// FormFactor is configSettings.formFactor: "desktop" or "mobile".
	FormFactor string
	// ThrottlingMethod is configSettings.throttlingMethod: "simulate", "devtools" or
	// "provided".
	ThrottlingMethod string
	// CPUSlowdown is configSettings.throttling.cpuSlowdownMultiplier, the multiplier the run
	// used (0 if absent).
	CPUSlowdown float64
	// BenchmarkIndex is environment.benchmarkIndex, the machine's speed Lighthouse measured
	// before the load (0 if absent).
	BenchmarkIndex float64
	// RuntimeError is set when Lighthouse could not audit the page at all (DNS failure, HTTP
	// error, page hung...). The metrics are then Missing.
	RuntimeError *RuntimeError

	// Lab metrics, in milliseconds except CLS (unitless).
	FCP        *float64 // audits['first-contentful-paint'].numericValue
	LCP        *float64 // audits['largest-contentful-paint'].numericValue
	CLS        *float64 // audits['cumulative-layout-shift'].numericValue
	TBT        *float64 // audits['total-blocking-time'].numericValue
	SpeedIndex *float64 // audits['speed-index'].numericValue
	TTFB       *float64 // audits.metrics.details.items[0].timeToFirstByte (simulated unless throttling is off)
	TTI        *float64 // audits.interactive.numericValue

	// Category scores on a 0..100 scale, rounded to an integer as Lighthouse's report shows them.
	Performance   *float64
	Accessibility *float64
	BestPractices *float64
	SEO           *float64

	// KBTotal is audits['total-byte-weight'].numericValue / 1024 (transferred KiB).
	KBTotal *float64
	// CPUTotal is audits.diagnostics.details.items[0].totalTaskTime, ms of main-thread tasks.
	CPUTotal *float64
	// DOMReady and OnLoad are the observed (unthrottled) DOMContentLoaded and load event times
	// from audits.metrics.details.items[0], ms from navigation start.
	DOMReady *float64
	OnLoad   *float64
	// DOMElements is audits['dom-size-insight'].numericValue (total elements).
	DOMElements *int
	// DOMMaxDepth is audits['dom-size-insight'].details.debugData.maxDepth.
	DOMMaxDepth *int
	// ServerTime is audits['server-response-time'].numericValue, ms the server took to answer
	// the main document (observed).
	ServerTime *float64
	// Network is the transfer size by resource type from audits['resource-summary']; nil if
	// that audit is missing.
	Network *NetworkBytes

	// Opportunities are the failed audits worth showing a user, in the report's own order.
	Opportunities []Opportunity

	// Missing names (by their API field name, e.g. "lcp", "dom_max_depth", "network") every
	// value above that the report did not provide.
	Missing []string
}

// NetworkBytes is the transfer size in bytes per resource type, from the rows of
// audits['resource-summary'].details.items (keyed there by resourceType).
type NetworkBytes struct {
	Total      int64 // "total"
	Document   int64 // "document"
	Image      int64 // "image"
	Script     int64 // "script"
	CSS        int64 // "stylesheet"
	Font       int64 // "font"
	Media      int64 // "media"
	Other      int64 // "other"
	ThirdParty int64 // "third-party": bytes from other sites than the page's own, any type
	// Requests is the number of requests of the "total" row (its requestCount).
	Requests int64
}

// Opportunity is one failed Lighthouse audit: what the API lists as an "opportunity". Its ID
// is the Lighthouse audit id (e.g. "render-blocking-insight"); Title and Description are
// Lighthouse's English texts (Description is Markdown); Category is "performance",
// "accessibility", "best_practices" or "seo"; DisplayValue is Lighthouse's short summary
// (e.g. "Est savings of 90 ms"), often empty; the savings are Lighthouse's estimates.
type Opportunity struct {
	model.Opportunity
	// Score is the audit's score, 0 to below 0.9.
	Score float64
}

// RuntimeError is Lighthouse's lhr.runtimeError: the page could not be audited.
type RuntimeError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error makes a RuntimeError usable as an error value by callers that want to fail on it.
func (e *RuntimeError) Error() string {
	return fmt.Sprintf("lighthouse runtime error %s: %s", e.Code, e.Message)
}

// Opportunity category names as the API spells them (note best_practices with an underscore,
// while Lighthouse's category id is "best-practices").
const (
	CategoryPerformance   = "performance"
	CategoryAccessibility = "accessibility"
	CategoryBestPractices = "best_practices"
	CategorySEO           = "seo"
)

// passScore is Lighthouse's own pass threshold (report-utils RATINGS.PASS.minScore): the report
// shows an audit as passed from 0.9 up.
const passScore = 0.9

// lhr is the part of a Lighthouse result that Decode reads.
type lhr struct {
	LighthouseVersion string        `json:"lighthouseVersion"`
	RequestedURL      string        `json:"requestedUrl"`
	MainDocumentURL   string        `json:"mainDocumentUrl"`
	FinalDisplayedURL string        `json:"finalDisplayedUrl"`
	FinalURL          string        `json:"finalUrl"`
	FetchTime         string        `json:"fetchTime"`
	RuntimeError      *RuntimeError `json:"runtimeError"`
	ConfigSettings    struct {
		FormFactor       string `json:"formFactor"`
		ThrottlingMethod string `json:"throttlingMethod"`
		Throttling       struct {
			CPUSlowdownMultiplier float64 `json:"cpuSlowdownMultiplier"`
		} `json:"throttling"`
	} `json:"configSettings"`
	Environment struct {
		BenchmarkIndex float64 `json:"benchmarkIndex"`
	} `json:"environment"`
	Audits     map[string]lhrAudit    `json:"audits"`
	Categories map[string]lhrCategory `json:"categories"`
	// Entities are Lighthouse's parties (first or third) of the page's requests.
	Entities []struct {
		Name         string `json:"name"`
		IsFirstParty bool   `json:"isFirstParty"`
	} `json:"entities"`
}

type lhrAudit struct {
	ID               string          `json:"id"`
	Title            string          `json:"title"`
	Description      string          `json:"description"`
	Score            *float64        `json:"score"`
	ScoreDisplayMode string          `json:"scoreDisplayMode"`
	NumericValue     *float64        `json:"numericValue"`
	DisplayValue     string          `json:"displayValue"`
	Details          json.RawMessage `json:"details"`
	// MetricSavings estimates each metric's gain (LCP, FCP, TBT, INP in ms; CLS unitless).
	MetricSavings map[string]*float64 `json:"metricSavings"`
}

type lhrCategory struct {
	Score     *float64 `json:"score"`
	AuditRefs []struct {
		ID    string `json:"id"`
		Group string `json:"group"`
	} `json:"auditRefs"`
}

// metricsItem is audits.metrics.details.items[0]; pointers because a field may be absent.
type metricsItem struct {
	TimeToFirstByte          *float64 `json:"timeToFirstByte"`
	ObservedDomContentLoaded *float64 `json:"observedDomContentLoaded"`
	ObservedLoad             *float64 `json:"observedLoad"`
}

// Result is a Lighthouse result decoded once: its report and its diagnostics are read from the
// one decoding, and its JSON is kept as Lighthouse wrote it, to be stored.
type Result struct {
	lhr    *lhr
	report *Report
	raw    []byte
}

// Decode decodes a Lighthouse result (the JSON written by the runner's audit op or by
// `lighthouse --output=json`). It fails only when lhrJSON is not a Lighthouse result; a result
// with a runtime error or errored audits decodes, with the gaps in its report's Missing.
func Decode(lhrJSON []byte) (*Result, error) {
	l, err := decodeLHR(lhrJSON)
	if err != nil {
		return nil, err
	}
	return &Result{lhr: l, report: l.report(), raw: lhrJSON}, nil
}

// Report is what the result says of the page: its metrics, scores, opportunities and the
// settings it ran with.
func (r *Result) Report() *Report { return r.report }

// JSON is the result as Lighthouse wrote it.
func (r *Result) JSON() []byte { return r.raw }

// decodeLHR decodes a Lighthouse result, for Decode.
func decodeLHR(lhrJSON []byte) (*lhr, error) {
	var l lhr
	if err := json.Unmarshal(lhrJSON, &l); err != nil {
		return nil, fmt.Errorf("lighthouse: parse report: %w", err)
	}
	if l.LighthouseVersion == "" || l.Audits == nil {
		return nil, errors.New("lighthouse: parse report: not a Lighthouse result (no lighthouseVersion or audits)")
	}
	return &l, nil
}

// report is a decoded result's Report.
func (l *lhr) report() *Report {
	r := &Report{
		LighthouseVersion: l.LighthouseVersion,
		RequestedURL:      l.RequestedURL,
		FinalURL:          firstNonEmpty(l.FinalDisplayedURL, l.MainDocumentURL, l.FinalURL),
		FormFactor:        l.ConfigSettings.FormFactor,
		ThrottlingMethod:  l.ConfigSettings.ThrottlingMethod,
		CPUSlowdown:       l.ConfigSettings.Throttling.CPUSlowdownMultiplier,
		BenchmarkIndex:    l.Environment.BenchmarkIndex,
		RuntimeError:      l.RuntimeError,
	}
	if t, err := time.Parse(time.RFC3339Nano, l.FetchTime); err == nil {
		r.FetchTime = t
	}
	f := &reportFields{l: l, r: r}
	f.haveMetrics = firstItem(l.Audits["metrics"].Details, &f.m)
	r.FCP = f.numeric("fcp", "first-contentful-paint")
	r.LCP = f.numeric("lcp", "largest-contentful-paint")
	r.CLS = f.numeric("cls", "cumulative-layout-shift")
	r.TBT = f.numeric("tbt", "total-blocking-time")
	r.SpeedIndex = f.numeric("speed_index", "speed-index")
	r.TTFB = f.metricsValue("ttfb", f.m.TimeToFirstByte)
	r.TTI = f.numeric("tti", "interactive")
	r.Performance = f.score("performance_score", "performance")
	r.Accessibility = f.score("accessibility_score", "accessibility")
	r.BestPractices = f.score("best_practices_score", "best-practices")
	r.SEO = f.score("seo_score", "seo")
	if v := f.numeric("kb_total", "total-byte-weight"); v != nil {
		kb := *v / 1024
		r.KBTotal = &kb
	}
	r.CPUTotal = f.cpuTotal()
	r.DOMReady = f.metricsValue("dom_ready", f.m.ObservedDomContentLoaded)
	r.OnLoad = f.metricsValue("on_load", f.m.ObservedLoad)
	if v := f.numeric("dom_elements", "dom-size-insight"); v != nil {
		n := int(math.Round(*v))
		r.DOMElements = &n
	}
	r.DOMMaxDepth = f.domMaxDepth()
	r.ServerTime = f.numeric("server_time", "server-response-time")
	r.Network = networkBytes(l.Audits["resource-summary"].Details)
	if r.Network == nil {
		f.missing("network")
	}
	r.Opportunities = opportunities(l)
	return r
}

// reportFields reads a Report's fields out of the LHR, noting each one missing in the
// report's Missing, in the order they are read.
type reportFields struct {
	l *lhr
	r *Report
	// m is the metrics audit's item, when haveMetrics.
	m           metricsItem
	haveMetrics bool
}

func (f *reportFields) missing(field string) { f.r.Missing = append(f.r.Missing, field) }

// numeric returns an audit's numericValue, or nil (and notes the field missing).
func (f *reportFields) numeric(field, auditID string) *float64 {
	if a, ok := f.l.Audits[auditID]; ok && a.NumericValue != nil && isFinite(*a.NumericValue) {
		v := *a.NumericValue
		return &v
	}
	f.missing(field)
	return nil
}

// metricsValue returns v, a value of the metrics audit's item, or nil (and notes the field
// missing).
func (f *reportFields) metricsValue(field string, v *float64) *float64 {
	if f.haveMetrics && v != nil && isFinite(*v) {
		return v
	}
	f.missing(field)
	return nil
}

// score returns a category's score out of 100, or nil (and notes the field missing).
func (f *reportFields) score(field, categoryID string) *float64 {
	if c, ok := f.l.Categories[categoryID]; ok && c.Score != nil && isFinite(*c.Score) {
		// Rounded like Lighthouse's report (Math.round(score * 100)): 0.99 * 100 is
		// 98.99999999999999 in floating point.
		v := math.Round(*c.Score * 100)
		return &v
	}
	f.missing(field)
	return nil
}

// cpuTotal returns the diagnostics audit's total task time, or nil (and notes cpu_total
// missing).
func (f *reportFields) cpuTotal() *float64 {
	var diag struct {
		TotalTaskTime *float64 `json:"totalTaskTime"`
	}
	if firstItem(f.l.Audits["diagnostics"].Details, &diag) && diag.TotalTaskTime != nil && isFinite(*diag.TotalTaskTime) {
		return diag.TotalTaskTime
	}
	f.missing("cpu_total")
	return nil
}

// domMaxDepth returns the DOM's depth, or nil (and notes dom_max_depth missing). maxDepth is
// in details.debugData, which dom-size-insight fills (with totalElements and maxChildren) only
// when the trace carried DOM statistics; the same number is also the "DOM depth" row of
// details.items, but that row is located by a localized label.
func (f *reportFields) domMaxDepth() *int {
	var dom struct {
		DebugData struct {
			MaxDepth *float64 `json:"maxDepth"`
		} `json:"debugData"`
	}
	if d := f.l.Audits["dom-size-insight"].Details; len(d) > 0 && json.Unmarshal(d, &dom) == nil &&
		dom.DebugData.MaxDepth != nil && isFinite(*dom.DebugData.MaxDepth) {
		n := int(math.Round(*dom.DebugData.MaxDepth))
		return &n
	}
	f.missing("dom_max_depth")
	return nil
}

// networkBytes reads resource-summary's rows; nil when the audit has no table.
func networkBytes(details json.RawMessage) *NetworkBytes {
	if len(details) == 0 {
		return nil
	}
	var d struct {
		Items []struct {
			ResourceType string   `json:"resourceType"`
			TransferSize *float64 `json:"transferSize"`
			RequestCount int64    `json:"requestCount"`
		} `json:"items"`
	}
	if err := json.Unmarshal(details, &d); err != nil || len(d.Items) == 0 {
		return nil
	}
	n := &NetworkBytes{}
	for _, it := range d.Items {
		if it.TransferSize == nil || !isFinite(*it.TransferSize) {
			continue
		}
		v := int64(math.Round(*it.TransferSize))
		if it.ResourceType == "total" {
			n.Total, n.Requests = v, it.RequestCount
		} else if field := resourceBytes[it.ResourceType]; field != nil {
			*field(n) = v
		}
	}
	return n
}

// resourceBytes are NetworkBytes' fields by resource-summary's resourceType, but for total.
var resourceBytes = map[string]func(*NetworkBytes) *int64{
	"document":    func(n *NetworkBytes) *int64 { return &n.Document },
	"image":       func(n *NetworkBytes) *int64 { return &n.Image },
	"script":      func(n *NetworkBytes) *int64 { return &n.Script },
	"stylesheet":  func(n *NetworkBytes) *int64 { return &n.CSS },
	"font":        func(n *NetworkBytes) *int64 { return &n.Font },
	"media":       func(n *NetworkBytes) *int64 { return &n.Media },
	"other":       func(n *NetworkBytes) *int64 { return &n.Other },
	"third-party": func(n *NetworkBytes) *int64 { return &n.ThirdParty },
}

// opportunityCategories lists, in report order, the categories whose failed audits are
// opportunities, with the API's name for each, its title for people, and which of its audit
// groups count (nil: all but "hidden").
var opportunityCategories = []struct {
	lighthouseID string
	name         string
	title        string
	groups       map[string]bool
}{
	// For performance only the insights and diagnostics groups: the metrics group is the
	// metrics themselves, and "hidden" holds data audits (metrics, diagnostics, resource-summary...).
	{"performance", CategoryPerformance, "Performance", map[string]bool{"insights": true, "diagnostics": true}},
	{"accessibility", CategoryAccessibility, "Accessibility", nil},
	{"best-practices", CategoryBestPractices, "Best practices", nil},
	{"seo", CategorySEO, "SEO", nil},
}

// CategoryTitle is an opportunity category's name for people ("Best practices" for
// best_practices), the name itself if it is none of the four.
func CategoryTitle(name string) string {
	if i := CategoryOrder(name); i < len(opportunityCategories) {
		return opportunityCategories[i].title
	}
	return name
}

// CategoryName is the name of the category at place i of CategoryOrder, "" for none.
func CategoryName(i int) string {
	if i < 0 || i >= len(opportunityCategories) {
		return ""
	}
	return opportunityCategories[i].name
}

// CategoryOrder is an opportunity category's place in the report (performance first), after
// the four for any other.
func CategoryOrder(name string) int {
	for i, c := range opportunityCategories {
		if c.name == name {
			return i
		}
	}
	return len(opportunityCategories)
}

// scoredModes are the scoreDisplayModes whose score means pass/fail. Lighthouse 13 gives most
// insights "metricSavings" (score 0, 0.5 or 1), not "numeric" or "binary", so leaving it out would
// drop nearly every performance opportunity. "informative", "manual", "notApplicable" and "error"
// carry no verdict.
var scoredModes = map[string]bool{"numeric": true, "binary": true, "metricSavings": true}

func opportunities(l *lhr) []Opportunity {
	var out []Opportunity
	seen := map[string]bool{}
	for _, c := range opportunityCategories {
		cat, ok := l.Categories[c.lighthouseID]
		if !ok {
			continue
		}
		for _, ref := range cat.AuditRefs {
			if (c.groups != nil && !c.groups[ref.Group]) || (c.groups == nil && ref.Group == "hidden") {
				continue
			}
			a, ok := l.Audits[ref.ID]
			if !ok || seen[ref.ID] || !scoredModes[a.ScoreDisplayMode] || a.Score == nil || *a.Score >= passScore {
				continue
			}
			seen[ref.ID] = true
			o := Opportunity{Opportunity: model.Opportunity{
				ID:           ref.ID,
				Title:        a.Title,
				Description:  a.Description,
				Category:     c.name,
				DisplayValue: a.DisplayValue,
			}, Score: *a.Score}
			o.SavingsMs, o.SavingsBytes, o.MetricSavings = savings(a)
			out = append(out, o)
		}
	}
	return out
}

// timeSavings are the metricSavings in milliseconds (CLS is the other, unitless).
var timeSavings = []string{"LCP", "FCP", "TBT", "INP"}

// savings reads an audit's estimates: its metricSavings (finite values only), the overall
// milliseconds (details.overallSavingsMs, else the largest time of metricSavings) and bytes
// (details.overallSavingsBytes of the older opportunity audits, else the wastedBytes an
// insight puts in details.debugData, the number its "Est savings of 143 KiB" shows).
func savings(a lhrAudit) (ms, bytes float64, metric map[string]float64) {
	for k, v := range a.MetricSavings {
		if v != nil && isFinite(*v) && *v >= 0 {
			if metric == nil {
				metric = map[string]float64{}
			}
			metric[k] = *v
		}
	}
	var d struct {
		OverallSavingsMs    *float64 `json:"overallSavingsMs"`
		OverallSavingsBytes *float64 `json:"overallSavingsBytes"`
		DebugData           struct {
			WastedBytes *float64 `json:"wastedBytes"`
		} `json:"debugData"`
	}
	if len(a.Details) > 0 {
		_ = json.Unmarshal(a.Details, &d) // details of another shape carry no overall savings
	}
	usable := func(v *float64) bool { return v != nil && isFinite(*v) && *v >= 0 }
	if usable(d.OverallSavingsMs) {
		ms = *d.OverallSavingsMs
	} else {
		for _, k := range timeSavings {
			ms = max(ms, metric[k])
		}
	}
	switch {
	case usable(d.OverallSavingsBytes):
		bytes = *d.OverallSavingsBytes
	case usable(d.DebugData.WastedBytes):
		bytes = *d.DebugData.WastedBytes
	}
	return math.Round(ms), math.Round(bytes), metric
}

// firstItem decodes details.items[0] into v; false if there is no such item.
func firstItem(details json.RawMessage, v any) bool {
	if len(details) == 0 {
		return false
	}
	var d struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(details, &d); err != nil || len(d.Items) == 0 {
		return false
	}
	return json.Unmarshal(d.Items[0], v) == nil
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
