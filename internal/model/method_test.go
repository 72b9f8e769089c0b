package model_test

import (
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

// TestMethodFor: a page's method is its profile's (its own, else the default profile), else
// its website's; a profile or website stored before methods ("") reads as simulated, a
// profile without one follows its website.
func TestMethodFor(t *testing.T) {
	old, fresh := model.Website{}, model.Website{Method: model.MethodApplied}
	own := model.Profile{ID: "p1", Pages: []model.ProfilePage{{Page: "pg_a", Device: "mobile"}}, Method: model.MethodSimulated}
	inherit := model.Profile{ID: "p2", Pages: []model.ProfilePage{{Page: "pg_b", Device: "mobile"}}}
	def := model.Profile{ID: "p3", Default: true, Method: model.MethodApplied}
	for _, tc := range []struct {
		name     string
		site     model.Website
		profiles []model.Profile
		page     string
		device   string
		want     string
	}{
		{"old website, no profile", old, nil, "pg_a", "mobile", model.MethodSimulated},
		{"new website, no profile", fresh, nil, "pg_a", "mobile", model.MethodApplied},
		{"the page's profile wins", fresh, []model.Profile{own, def}, "pg_a", "mobile", model.MethodSimulated},
		{"a profile without a method follows the new website", fresh, []model.Profile{inherit}, "pg_b", "mobile", model.MethodApplied},
		{"a profile without a method follows the old website", old, []model.Profile{inherit}, "pg_b", "mobile", model.MethodSimulated},
		{"the default profile switches an old website", old, []model.Profile{own, def}, "pg_c", "mobile", model.MethodApplied},
		{"on the other device the page's profile does not apply", fresh, []model.Profile{own}, "pg_a", "desktop", model.MethodApplied},
	} {
		if got := model.MethodFor(tc.site, tc.profiles, tc.page, tc.device); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if err := model.CheckMethod("devtools"); err == nil {
		t.Error(`CheckMethod("devtools") accepted`)
	}
	for _, m := range model.Methods {
		if err := model.CheckMethod(m); err != nil {
			t.Errorf("CheckMethod(%q): %v", m, err)
		}
	}
}

// TestCalibratedCPU: the preset's multiplier scaled by the machine's speed against the
// reference, within the bounds; an unknown index keeps the preset.
func TestCalibratedCPU(t *testing.T) {
	for _, tc := range []struct{ preset, index, want float64 }{
		{4, model.ReferenceBenchmarkIndex, 4},
		{4, 2 * model.ReferenceBenchmarkIndex, 8},
		{4, 2800, 7.3},
		{4, 766.5, 2},
		{4, 100, 1},    // slower than a quarter of the reference: cannot speed it up
		{4, 20000, 20}, // bounded
		{1, 3000, 2},
		{1, 800, 1},
		{4, 0, 4}, // unknown
	} {
		if got := model.CalibratedCPU(tc.preset, tc.index); got != tc.want {
			t.Errorf("CalibratedCPU(%v, %v) = %v, want %v", tc.preset, tc.index, got, tc.want)
		}
	}
}

// TestMeasuredWith: the sentence the page view shows, for each method.
func TestMeasuredWith(t *testing.T) {
	for _, tc := range []struct {
		r    model.LabResult
		want string
	}{
		{model.LabResult{}, "Simulated throttling: the numbers model a slow load computed from a fast one"},
		{model.LabResult{Method: model.MethodApplied, CPUMultiplier: 4, BenchmarkIndex: 1234.4}, "Measured with applied throttling (CPU 4.0× calibrated from benchmark index 1,234)"},
		{model.LabResult{Method: model.MethodApplied, CPUMultiplier: 7.3, BenchmarkIndex: 2797}, "Measured with applied throttling (CPU 7.3× calibrated from benchmark index 2,797)"},
		{model.LabResult{Method: model.MethodApplied, CPUMultiplier: 4}, "Measured with applied throttling (CPU 4.0×, uncalibrated)"},
	} {
		if got := tc.r.MeasuredWith(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}
