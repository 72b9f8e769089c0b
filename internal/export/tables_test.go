package export_test

import (
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/openvitals/openvitals/internal/export"
)

var update = flag.Bool("update", false, "rewrite tables.json from the row types")

// TestTablesFile: tables.json, which the CDK stack declares the Glue tables from, is the row
// types' columns (go test ./internal/export -update rewrites it).
func TestTablesFile(t *testing.T) {
	tables, err := export.Tables()
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(tables, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile("tables.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("tables.json")
	if err != nil || string(got) != string(want) {
		t.Fatalf("tables.json is not the row types' columns: run go test ./internal/export -run TestTablesFile -update")
	}
}
