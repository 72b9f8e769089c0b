package web

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/openvitals/openvitals/internal/metrics"
)

var update = flag.Bool("update", false, "rewrite static/metric-names.js from metrics.Names and metrics.Phases")

// TestMetricNamesScript: the dashboard's metric and LCP phase names are metrics.Names and
// metrics.Phases, the declarations the API's documentation takes them from too.
func TestMetricNamesScript(t *testing.T) {
	// The dashboard's bundle carries what its views read of them: no source, phases' labels.
	type name struct {
		Field  string  `json:"field"`
		Label  string  `json:"label"`
		Title  string  `json:"title,omitempty"`
		Unit   string  `json:"unit"`
		Good   float64 `json:"good,omitempty"`
		Poor   float64 `json:"poor,omitempty"`
		Higher bool    `json:"higher,omitempty"`
	}
	var ns, ps []name
	for _, n := range metrics.Names {
		ns = append(ns, name{n.Field, n.Label, n.Title, n.Unit, n.Good, n.Poor, n.Higher})
	}
	for _, n := range metrics.Phases {
		ps = append(ps, name{Field: n.Field, Label: n.Label, Unit: n.Unit})
	}
	names, err := json.Marshal(ns)
	if err != nil {
		t.Fatal(err)
	}
	phases, err := json.Marshal(ps)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("// Generated from internal/metrics/names.go by go test ./internal/web -run TestMetricNamesScript -update; do not edit.\n" +
		"window.ovMetricNames = " + string(names) + ";\n" +
		"window.ovPhaseNames = " + string(phases) + ";\n")
	const file = "static/metric-names.js"
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
		t.Errorf("%s is stale: run go test ./internal/web -run TestMetricNamesScript -update", file)
	}
}
