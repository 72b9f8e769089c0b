package model

import (
	"errors"
	"strings"
	"time"
)

// DayLayout is how days appear in sort keys.
const DayLayout = "20060102"

// LabResult is one day's lab audit of a page on one device: the median Lighthouse run's
// metrics, the document's navigation timing and validation, and its opportunities.
type LabResult struct {
	Page   string
	Device string
	Day    string // UTC day of the audit, yyyymmdd
	// Metrics holds every lab field by its interface name (fcp, lcp, cls, dns_time,
	// dom_elements, bytes_image, validation_errors...). A field Lighthouse could not measure is
	// absent, not zero.
	Metrics map[string]float64
	// Samples holds every Lighthouse run's value of the metrics regression detection watches
	// (the median run's are in Metrics), by name; results stored before it are without.
	Samples           map[string][]float64 `dynamodbav:",omitempty"`
	Opportunities     []Opportunity
	LighthouseVersion string
	ReportKey         string // S3 key of the gzipped Lighthouse report of the median run
	Runs              int
	Audited           time.Time
	// ProfileID and ProfileName name the test profile that measured it ("": none).
	ProfileID   string `dynamodbav:",omitempty"`
	ProfileName string `dynamodbav:",omitempty"`
	// Method is how it was measured, MethodApplied or MethodSimulated; "" (stored before
	// methods) was simulated: read it with MethodOr.
	Method string `dynamodbav:",omitempty"`
	// BenchmarkIndex is the machine's speed as Lighthouse measures it (environment.
	// benchmarkIndex): the index the applied CPU slowdown was calibrated from, or the median
	// run's for a simulated result; 0 when unknown.
	BenchmarkIndex float64 `dynamodbav:",omitempty"`
	// CPUMultiplier is the CPU slowdown the runs used: calibrated when applied, the preset's
	// as Lighthouse's simulation takes it when simulated; 0 when unknown.
	CPUMultiplier float64 `dynamodbav:",omitempty"`
}

// Opportunity is one failed audit of a lab result, with Lighthouse's estimate of what fixing
// it saves. Results stored before the estimates have none (all zero).
type Opportunity struct {
	ID           string
	Title        string
	Category     string
	Description  string `dynamodbav:",omitempty"`
	DisplayValue string `dynamodbav:",omitempty"`
	// SavingsMs is the estimated time saved, ms: the audit's details.overallSavingsMs where
	// Lighthouse gives it, else the largest time in MetricSavings.
	SavingsMs float64 `dynamodbav:",omitempty"`
	// SavingsBytes is the estimated transfer saved, bytes: details.overallSavingsBytes, or an
	// insight's details.debugData.wastedBytes.
	SavingsBytes float64 `dynamodbav:",omitempty"`
	// MetricSavings is the audit's metricSavings as Lighthouse names them (LCP, FCP, TBT, INP in
	// ms; CLS unitless): how much each metric would improve.
	MetricSavings map[string]float64 `dynamodbav:",omitempty"`
}

// OpportunityText is what an opportunity says whichever page it is found on: Lighthouse's
// title and Markdown description, and its category (performance, accessibility,
// best_practices, seo).
type OpportunityText struct {
	Title       string
	Category    string
	Description string `dynamodbav:",omitempty"`
}

// Text is what the opportunity says.
func (o Opportunity) Text() OpportunityText {
	return OpportunityText{Title: o.Title, Category: o.Category, Description: o.Description}
}

// SeenOpportunity is an opportunity found on a website: the first day (yyyymmdd) any page had
// it, and its latest texts (empty if it was recorded before they were kept).
type SeenOpportunity struct {
	FirstSeen string
	OpportunityText
}

// LabError is the last failure of a page's audits on one device.
type LabError struct {
	Message  string
	At       time.Time
	Attempts int
	// Final says that no delivery of the audit follows: the failure is permanent (another
	// attempt would meet it again), or Attempts was the last.
	Final bool `dynamodbav:",omitempty"`
}

// IsNotFound tells whether err means a missing item.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// Day formats a time as a UTC day for keys.
func Day(t time.Time) string { return t.UTC().Format(DayLayout) }

// DayToISO turns a yyyymmdd day into yyyy-mm-dd.
func DayToISO(day string) string {
	if len(day) != 8 || strings.ContainsAny(day, "-") {
		return day
	}
	return day[:4] + "-" + day[4:6] + "-" + day[6:]
}
