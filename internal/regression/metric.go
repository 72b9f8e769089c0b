package regression

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Metric is a metric whose series are watched: which way is worse, the least change that
// counts by default, and its unit for people.
type Metric struct {
	Name          string
	HigherIsWorse bool
	Default       Threshold
	Unit          string // "ms", "KiB", "" (unitless), "points", "requests"
}

// Series kinds: where a series' values come from.
const (
	SourceLab       = "lab"       // every Lighthouse run of a page's daily audit on a device
	SourceUX        = "ux"        // the user-experience dataset's daily p75 of a page on a device
	SourceMultistep = "multistep" // every run of a multistep test
	SourceRUM       = "rum"       // real users' daily p75 of a page (all devices)
	// SourceUXWeekly is the user-experience dataset's history of a page on a device: one p75
	// a weekly collection period (28 days each, a week apart), dated by the period's last day.
	SourceUXWeekly = "ux_weekly"
)

var metrics = map[string]Metric{}

func define(ms ...Metric) {
	for _, m := range ms {
		metrics[m.Name] = m
	}
}

func init() {
	timing := func(name string, absolute float64) Metric {
		return Metric{Name: name, HigherIsWorse: true, Default: Threshold{Relative: 0.10, Absolute: absolute}, Unit: "ms"}
	}
	define(
		Metric{Name: "performance_score", Default: Threshold{Absolute: 5}, Unit: "points"},
		timing("lcp", 100), timing("fcp", 100), timing("speed_index", 100), timing("ttfb", 50),
		timing("tbt", 50), timing("inp", 50), timing("duration", 200),
		Metric{Name: "cls", HigherIsWorse: true, Default: Threshold{Absolute: 0.05}},
		Metric{Name: "kb_total", HigherIsWorse: true, Default: Threshold{Relative: 0.10, Absolute: 20}, Unit: "KiB"},
		Metric{Name: "requests", HigherIsWorse: true, Default: Threshold{Relative: 0.10, Absolute: 2}, Unit: "requests"},
	)
}

// SourceMetrics lists the metrics watched in each kind of series.
var SourceMetrics = map[string][]string{
	SourceLab:       {"performance_score", "lcp", "fcp", "cls", "tbt", "speed_index", "ttfb", "kb_total", "requests"},
	SourceUX:        {"lcp", "fcp", "cls", "inp", "ttfb"},
	SourceMultistep: {"duration", "inp", "tbt", "cls"},
	SourceRUM:       {"lcp", "fcp", "cls", "inp", "ttfb"},
	SourceUXWeekly:  {"lcp", "fcp", "cls", "inp", "ttfb"},
}

// Lookup returns a watched metric by name.
func Lookup(name string) (Metric, bool) {
	m, ok := metrics[name]
	return m, ok
}

// MetricNames lists every watched metric, sorted.
func MetricNames() []string {
	names := slices.Collect(maps.Keys(metrics))
	sort.Strings(names)
	return names
}

// Thresholds are a website's least changes by metric, over the defaults.
type Thresholds map[string]Threshold

// For returns the threshold of metric: the website's own, else the default.
func (t Thresholds) For(metric string) Threshold {
	if th, ok := t[metric]; ok {
		return th
	}
	return metrics[metric].Default
}

// Resolved lists every metric's threshold in effect.
func (t Thresholds) Resolved() Thresholds {
	out := Thresholds{}
	for name := range metrics {
		out[name] = t.For(name)
	}
	return out
}

// The ranges of a threshold's parts: relative is a fraction of the level before (10 is
// 1,000 %), absolute is in the metric's unit (a day in ms, a GB in KiB). A part that is not 0
// is at least MinThreshold: finer changes mean nothing, and the tiniest numbers cannot be stored.
const (
	MaxRelative  = 10
	MaxAbsolute  = 1e9
	MinThreshold = 1e-6
)

// ThresholdProblem is what is wrong with one threshold. Field names the metric, or one part of
// its threshold (lcp.relative); Unknown says the metric is not watched.
type ThresholdProblem struct {
	Field, Message string
	Unknown        bool
}

// ThresholdError lists every problem of a set of thresholds, by field.
type ThresholdError []ThresholdProblem

func (e ThresholdError) Error() string {
	msgs := make([]string, len(e))
	for i, p := range e {
		msgs[i] = p.Field + ": " + p.Message
	}
	return strings.Join(msgs, "; ")
}

// Validate refuses unknown metrics, parts out of their range, and thresholds of 0: a
// ThresholdError.
func (t Thresholds) Validate() error {
	var out ThresholdError
	for _, name := range slices.Sorted(maps.Keys(t)) {
		th := t[name]
		if _, ok := metrics[name]; !ok {
			out = append(out, ThresholdProblem{Field: name, Message: fmt.Sprintf("is not a watched metric (one of %s)", strings.Join(MetricNames(), ", ")), Unknown: true})
			continue
		}
		part := func(field string, v, max float64) {
			if msg := checkPart(v, max); msg != "" {
				out = append(out, ThresholdProblem{Field: name + "." + field, Message: msg})
			}
		}
		part("relative", th.Relative, MaxRelative)
		part("absolute", th.Absolute, MaxAbsolute)
		if th.Relative == 0 && th.Absolute == 0 {
			out = append(out, ThresholdProblem{Field: name, Message: "a threshold of 0 would count every difference: set relative, absolute or both"})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// checkPart says what is wrong with a threshold's part, "" when nothing is.
func checkPart(v, max float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > max:
		return fmt.Sprintf("must be from 0 to %s", strconv.FormatFloat(max, 'f', -1, 64))
	case v != 0 && v < MinThreshold:
		return fmt.Sprintf("must be 0 or at least %s", strconv.FormatFloat(MinThreshold, 'f', -1, 64))
	}
	return ""
}
