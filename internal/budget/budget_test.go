package budget

import "testing"

func TestStatusBoundaries(t *testing.T) {
	for _, tc := range []struct {
		op               string
		threshold, value float64
		want             string
	}{
		// lt 2500: exceeded from 2500 up, at risk from 2250 (10% below) to just under 2500.
		{"lt", 2500, 0, OK},
		{"lt", 2500, 2249.99, OK},
		{"lt", 2500, 2250, AtRisk},
		{"lt", 2500, 2400, AtRisk},
		{"lt", 2500, 2499.99, AtRisk},
		{"lt", 2500, 2500, Exceeded},
		{"lt", 2500, 2500.01, Exceeded},
		{"lt", 2500, 9000, Exceeded},
		// gt 90: exceeded from 90 down, at risk up to 99 (10% above).
		{"gt", 90, 100, OK},
		{"gt", 90, 99.01, OK},
		{"gt", 90, 99, AtRisk},
		{"gt", 90, 90.01, AtRisk},
		{"gt", 90, 90, Exceeded},
		{"gt", 90, 89.99, Exceeded},
		{"gt", 90, 0, Exceeded},
		// Fractions (cls lt 0.1): at risk from 0.09.
		{"lt", 0.1, 0.0899, OK},
		{"lt", 0.1, 0.09, AtRisk},
		{"lt", 0.1, 0.1, Exceeded},
		// A zero threshold has no margin.
		{"lt", 0, -1, OK},
		{"lt", 0, 0, Exceeded},
		{"gt", 0, 0.001, OK},
		{"gt", 0, 0, Exceeded},
	} {
		if got := Status(tc.op, tc.threshold, tc.value); got != tc.want {
			t.Errorf("Status(%s %v, %v) = %s, want %s", tc.op, tc.threshold, tc.value, got, tc.want)
		}
	}
}

func TestWorseAndAppliesTo(t *testing.T) {
	if Worse(OK, AtRisk) != AtRisk || Worse(Exceeded, AtRisk) != Exceeded || Worse(OK, OK) != OK {
		t.Error("Worse does not order ok < at-risk < exceeded")
	}
	if !AppliesTo("all", "mobile") || !AppliesTo("desktop", "desktop") || AppliesTo("desktop", "mobile") {
		t.Error("AppliesTo is wrong")
	}
}
