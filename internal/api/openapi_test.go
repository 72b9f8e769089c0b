package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

var update = flag.Bool("update", false, "rewrite generated files (openapi.json)")

// loadYAML parses and validates openapi.yaml, the source of the interface's description.
func loadYAML() (*openapi3.T, error) {
	yaml, err := os.ReadFile("openapi.yaml")
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(yaml)
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
}

// TestOpenAPIJSONIsCurrent keeps the served openapi.json generated from openapi.yaml.
func TestOpenAPIJSONIsCurrent(t *testing.T) {
	doc, err := loadYAML()
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if *update {
		if err := os.WriteFile("openapi.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("openapi.json is stale: run go test ./internal/api -run TestOpenAPIJSON -update")
	}
}
