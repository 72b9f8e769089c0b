package model

import (
	"fmt"
	"math"
)

// The measurement methods of a lab audit (Lighthouse's throttlingMethod).
const (
	// MethodApplied is Lighthouse's DevTools throttling: the latency, throughput and CPU
	// slowdown are applied to the load itself, so that its metrics, trace, filmstrip and
	// waterfall come from one slow load.
	MethodApplied = "applied"
	// MethodSimulated is Lighthouse's simulated throttling (lantern): the metrics are a model
	// of a slow load computed from a fast, unthrottled one, as PageSpeed Insights reports them.
	MethodSimulated = "simulated"
)

// Methods are the measurement methods, in the order the API lists them.
var Methods = []string{MethodApplied, MethodSimulated}

// CheckMethod tells whether m names a measurement method.
func CheckMethod(m string) error {
	if m != MethodApplied && m != MethodSimulated {
		return fmt.Errorf("must be %s or %s", MethodApplied, MethodSimulated)
	}
	return nil
}

// MethodOr reads a stored method: "" is what every website, profile and result stored before
// methods existed holds, and they were all measured by simulation, so "" reads as
// MethodSimulated; fallback is read in its place where a "" means "inherited" (a profile's
// own method, which falls back on its website's).
func MethodOr(m, fallback string) string {
	if m != "" {
		return m
	}
	if fallback != "" {
		return fallback
	}
	return MethodSimulated
}

// MethodFor is the method a page is measured with on a device: that of the profile ProfileFor
// picks (the page's own, else the website's default), else the website's. A profile that says
// none (stored before methods, or created without one) follows its website.
func MethodFor(site Website, profiles []Profile, page, device string) string {
	if p, ok := ProfileFor(profiles, page, device); ok {
		return MethodOr(p.Method, site.Method)
	}
	return MethodOr(site.Method, "")
}

// MethodLabel is how a result's method is named beside its device ("mobile, applied
// throttling").
func MethodLabel(m string) string {
	return MethodOr(m, "") + " throttling"
}

// Calibration of the CPU slowdown of applied throttling. Lighthouse's presets were set for a
// machine of a given speed: its 4× mobile slowdown makes a mid-tier phone of a machine whose
// benchmarkIndex is about ReferenceBenchmarkIndex (Lighthouse's CPU throttling calculator:
// 1,533 is "4× slowdown"). A slower machine (a Lambda function with less memory has less CPU)
// needs less, a faster one more, in proportion.
const (
	// ReferenceBenchmarkIndex is the benchmarkIndex the presets' multipliers are meant for.
	ReferenceBenchmarkIndex = 1533
	// MinCPUMultiplier and MaxCPUMultiplier bound a calibrated multiplier: DevTools cannot
	// make a CPU faster than it is, and past 20× the machine's own noise dominates.
	MinCPUMultiplier = 1
	MaxCPUMultiplier = 20
)

// CalibratedCPU is the CPU multiplier that makes a machine of benchmarkIndex index emulate
// the device preset's multiplier models on the reference machine: preset × index / reference,
// rounded to a tenth and kept within [MinCPUMultiplier, MaxCPUMultiplier]. An unknown index
// (0 or less) leaves the preset as it is.
func CalibratedCPU(preset, index float64) float64 {
	if index <= 0 || math.IsNaN(index) || math.IsInf(index, 0) {
		return preset
	}
	m := math.Round(preset*index/ReferenceBenchmarkIndex*10) / 10
	return min(max(m, MinCPUMultiplier), MaxCPUMultiplier)
}

// AppliedWaits are how long Lighthouse waits at the end of an applied load before it stops
// recording, in its settings' names and milliseconds. Lighthouse's own for loads it does not
// simulate are 5.25 s each, and it starts counting its CPU quiet window only once the
// network's has passed, so a load sat about 10.5 s idle after its last request: 40 % of a
// light mobile page's run. Here the network's quiet window and the pauses after first paint
// and load take Lighthouse's values for simulated loads, and its CPU quiet window is off: the
// browser layer's runner then records until the page has been 5.25 s past its first paint,
// its last long task and its network's last moment with more than two requests in flight,
// which is what time to interactive (the end of TBT's window) needs in the trace, and no more.
var AppliedWaits = map[string]int{
	"pauseAfterFcpMs":         1000,
	"pauseAfterLoadMs":        1000,
	"networkQuietThresholdMs": 1000,
	"cpuQuietThresholdMs":     0,
}

// MeasuredWith says in a sentence how a result was measured, as the page view and the API
// show it: the method, and for applied throttling the calibrated CPU multiplier and the
// benchmark index it came from.
func (r LabResult) MeasuredWith() string {
	if MethodOr(r.Method, "") == MethodSimulated {
		return "Simulated throttling: the numbers model a slow load computed from a fast one"
	}
	if r.CPUMultiplier <= 0 {
		return "Measured with applied throttling"
	}
	if r.BenchmarkIndex <= 0 {
		return fmt.Sprintf("Measured with applied throttling (CPU %.1f×, uncalibrated)", r.CPUMultiplier)
	}
	return fmt.Sprintf("Measured with applied throttling (CPU %.1f× calibrated from benchmark index %s)", r.CPUMultiplier, thousands(int64(math.Round(r.BenchmarkIndex))))
}

// thousands writes n with commas between thousands (1,234).
func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
