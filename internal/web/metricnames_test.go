package web

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/openvitals/openvitals/internal/metrics"
)

var update = flag.Bool("update", false, "rewrite the generated files: static/metric-names.json from metrics.Names and metrics.Phases, bundle/app.js from the modules")

// TestMetricNamesJSON: the dashboard's metric and LCP phase names are metrics.Names and
// metrics.Phases, the declarations the API's documentation takes them from too.
func TestMetricNamesJSON(t *testing.T) {
	// The dashboard reads of them their names, units and thresholds (not their sources).
	type name struct {
		Field  string  `json:"field"`
		Label  string  `json:"label"`
		Title  string  `json:"title,omitempty"`
		Unit   string  `json:"unit,omitempty"`
		Good   float64 `json:"good,omitempty"`
		Poor   float64 `json:"poor,omitempty"`
		Higher bool    `json:"higher,omitempty"`
	}
	var doc struct {
		Generated string `json:"generated"`
		Metrics   []name `json:"metrics"`
		Phases    []name `json:"phases"`
	}
	doc.Generated = "from internal/metrics/names.go by go test ./internal/web -run TestMetricNamesJSON -update; do not edit"
	for _, n := range metrics.Names {
		doc.Metrics = append(doc.Metrics, name{n.Field, n.Label, n.Title, n.Unit, n.Good, n.Poor, n.Higher})
	}
	for _, n := range metrics.Phases {
		doc.Phases = append(doc.Phases, name{Field: n.Field, Label: n.Label, Unit: n.Unit})
	}
	want, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	const file = "static/metric-names.json"
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go test ./internal/web -run TestMetricNamesJSON -update", file)
	}
}
