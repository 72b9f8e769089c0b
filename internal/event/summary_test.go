package event_test

import (
	"testing"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
)

// TestIncidentSummaryNames: an incident's summary names each metric as people read it (the
// names the dashboard and the API's documentation use), with grouped digits and a whole
// percentage, never a field such as kb_total.
func TestIncidentSummaryNames(t *testing.T) {
	in := model.Incident{Kind: model.KindRegression, Members: []model.Regression{
		{Metric: "kb_total", Device: "desktop", Source: "lab", FirstBad: "20261120", Before: model.Level{Median: 6.94}, After: model.Level{Median: 679.2}, Percent: 9688.5},
		{Metric: "lcp", Device: "desktop", Source: "lab", FirstBad: "20261120", Before: model.Level{Median: 1200}, After: model.Level{Median: 12500}, Percent: 941.7},
	}}
	units := map[string]string{"kb_total": "KiB", "lcp": "ms"}
	got := event.IncidentSummary(in, "Home (/)", func(m string) string { return units[m] })
	want := "Regression of Home (/) from 2026-11-20: Transfer 6.94 → 679 KiB (+9,689 %, desktop, " + model.MethodLabel("") +
		"), LCP 1,200 → 12,500 ms (+942 %, desktop, " + model.MethodLabel("") + ")"
	if got != want {
		t.Errorf("summary\n%q, want\n%q", got, want)
	}
}
