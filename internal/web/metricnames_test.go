package web

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/openvitals/openvitals/internal/metrics"
)

var update = flag.Bool("update", false, "rewrite static/metric-names.js from metrics.Names")

// TestMetricNamesScript: the dashboard's metric names are metrics.Names, the declaration the
// API's documentation takes them from too.
func TestMetricNamesScript(t *testing.T) {
	names, err := json.Marshal(metrics.Names)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("// Generated from internal/metrics/names.go by go test ./internal/web -run TestMetricNamesScript -update; do not edit.\n" +
		"window.ovMetricNames = " + string(names) + ";\n")
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
