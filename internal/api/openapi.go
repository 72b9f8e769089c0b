package api

import (
	_ "embed"
	"net/http"
)

// openAPIJSON is the OpenAPI 3.1 document of the interface. openapi.yaml is the source; the
// JSON is generated from it by `go test ./internal/api -run TestOpenAPIJSON -update` (a test
// fails when it is stale), so that no function carries a YAML or OpenAPI library: parsing the
// YAML at start cost a quarter of a cold start.
//
//go:embed openapi.json
var openAPIJSON []byte

func serveOpenAPI(w http.ResponseWriter, _ *http.Request, _ caller) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPIJSON)
	return nil
}

// OpenAPIJSON returns the OpenAPI document as served; tests check responses against it.
func OpenAPIJSON() []byte { return openAPIJSON }
