package budget

import (
	"context"
	"reflect"
	"testing"

	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
)

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

func TestCount(t *testing.T) {
	budgets := []model.Budget{
		{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"},
		{Metric: "cls", Operator: "lt", Value: 0.1, Device: "mobile"},
		{Metric: "performance_score", Operator: "gt", Value: 90, Device: "desktop"},
		{Metric: "ux_lcp", Operator: "lt", Value: 2500, Device: "mobile"},
	}
	for _, tc := range []struct {
		name             string
		device           string
		vals             map[string]float64
		exceeded, atRisk int
	}{
		{"nothing measured", "mobile", nil, 0, 0},
		{"all fine on desktop", "desktop", map[string]float64{"lcp": 1000, "performance_score": 100}, 0, 0},
		{"lcp at risk, performance exceeded", "desktop", map[string]float64{"lcp": 2400, "performance_score": 80}, 1, 1},
		{"a mobile budget does not judge desktop", "desktop", map[string]float64{"cls": 0.5, "ux_lcp": 9000}, 0, 0},
		{"mobile: lab and ux budgets", "mobile", map[string]float64{"lcp": 4000, "cls": 0.12, "ux_lcp": 2433, "performance_score": 1}, 2, 1},
	} {
		exceeded, atRisk := Count(budgets, tc.device, metrics.Values(tc.vals).Get)
		if exceeded != tc.exceeded || atRisk != tc.atRisk {
			t.Errorf("%s: %d exceeded, %d at risk; want %d, %d", tc.name, exceeded, atRisk, tc.exceeded, tc.atRisk)
		}
	}
}

func TestEvaluate(t *testing.T) {
	home, pricing := model.Page{ID: "home", Alias: "/"}, model.Page{ID: "pricing", Alias: "/pricing"}
	measured := []Measured{
		{Page: home, Device: "desktop", Values: map[string]float64{"lcp": 2400, "performance_score": 93, metrics.MethodField: 1}},
		{Page: home, Device: "mobile", Values: map[string]float64{"lcp": 4000, "cls": 0.1235, metrics.MethodField: 1}},
		{Page: pricing, Device: "desktop", Values: map[string]float64{"lcp": 1000, "performance_score": 100, metrics.MethodField: 0}},
		{Page: pricing, Device: "mobile", Values: map[string]float64{"ux_lcp": 3000}}, // field data only
		{Page: pricing, Device: "mobile"}, // nothing measured
	}
	applied, simulated := model.MethodApplied, model.MethodSimulated
	lcp := model.Budget{ID: "lcp", Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"}
	cls := model.Budget{ID: "cls", Metric: "cls", Operator: "lt", Value: 0.1, Device: "mobile"}
	perf := model.Budget{ID: "perf", Metric: "performance_score", Operator: "gt", Value: 90, Device: "desktop"}
	dom := model.Budget{ID: "dom", Metric: "dom_elements", Operator: "lt", Value: 1500, Device: "all"}
	field := model.Budget{ID: "field", Metric: "ux_lcp", Operator: "lt", Value: 2500, Device: "mobile"}
	got := Evaluate([]model.Budget{lcp, cls, perf, dom, field}, measured)
	// Methods: those of the lab values judged, each once; none for field data.
	want := []Report{
		{Budget: lcp, Status: Exceeded, Pages: []PageStatus{{home, "desktop", AtRisk}, {home, "mobile", Exceeded}}, Methods: []string{applied, simulated}},
		{Budget: cls, Status: Exceeded, Pages: []PageStatus{{home, "mobile", Exceeded}}, Methods: []string{applied}},
		{Budget: perf, Status: AtRisk, Pages: []PageStatus{{home, "desktop", AtRisk}}, Methods: []string{applied, simulated}},
		{Budget: dom, Status: OK, Pages: []PageStatus{}},
		{Budget: field, Status: Exceeded, Pages: []PageStatus{{pricing, "mobile", Exceeded}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reports\n got %+v\nwant %+v", got, want)
	}
	if got := Evaluate(nil, measured); got == nil || len(got) != 0 {
		t.Errorf("no budgets: %v, want an empty list", got)
	}
}

// fakeWebsite is a website's budgets and series in memory; it counts the checker's reads of
// values.
type fakeWebsite struct {
	budgets []model.Budget
	series  []metrics.Series
	reads   int
}

func (f *fakeWebsite) Budgets(context.Context, model.Website) ([]model.Budget, error) {
	return f.budgets, nil
}

func (f *fakeWebsite) Listings(context.Context, model.Website, string, int) ([]metrics.Listing, bool, error) {
	f.reads++
	out := make([]metrics.Listing, len(f.series))
	for i, s := range f.series {
		out[i] = s.Listing()
	}
	return out, false, nil
}

func TestChecker(t *testing.T) {
	home := model.Page{ID: "home"}
	f := &fakeWebsite{series: []metrics.Series{{Page: home, Device: "mobile",
		Lab: []model.LabResult{{Day: "20261101", Metrics: map[string]float64{"lcp": 2000}}, {Day: "20261102", Metrics: map[string]float64{"lcp": 4000}}},
		UX:  []model.UXResult{{Day: "20261102", Vitals: map[string]model.Vital{"lcp": {P75: 2600}}}}}}}
	c := NewChecker(f, f)
	ctx := context.Background()

	if got, err := c.Website(ctx, model.Website{}); err != nil || got == nil || len(got) != 0 || f.reads != 0 {
		t.Errorf("no budgets: %v, %v, %d reads; want an empty list and no values read", got, err, f.reads)
	}
	f.budgets = []model.Budget{{Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"}}
	got, err := c.Website(ctx, model.Website{})
	if err != nil || len(got) != 1 || got[0].Status != Exceeded || f.reads != 1 {
		t.Errorf("a lab budget: %+v, %v, %d reads; want the mean of 3000 exceeded", got, err, f.reads)
	}
	f.budgets = append(f.budgets, model.Budget{Metric: "ux_lcp", Operator: "lt", Value: 2500, Device: "mobile"})
	got, err = c.Website(ctx, model.Website{})
	if err != nil || len(got) != 2 || got[1].Status != Exceeded {
		t.Errorf("a ux budget: %+v, %v; want ux_lcp 2600 exceeded", got, err)
	}
}
