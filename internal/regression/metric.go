package regression

import (
	"fmt"
	"maps"
	"slices"
	"sort"
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

// Validate refuses unknown metrics and negative or absent-both thresholds.
func (t Thresholds) Validate() error {
	for name, th := range t {
		if _, ok := metrics[name]; !ok {
			return fmt.Errorf("%q is not a watched metric (one of %v)", name, MetricNames())
		}
		if th.Relative < 0 || th.Absolute < 0 || th.Relative > 10 {
			return fmt.Errorf("%s: relative must be 0 to 10 and absolute at least 0", name)
		}
		if th.Relative == 0 && th.Absolute == 0 {
			return fmt.Errorf("%s: a threshold of 0 would count every difference", name)
		}
	}
	return nil
}
