// Package budget decides whether measured values keep to performance budgets.
package budget

import "math"

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
