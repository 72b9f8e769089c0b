package api

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// OpenAPIYAML is the OpenAPI 3.1 document of the interface.
//
//go:embed openapi.yaml
var OpenAPIYAML []byte

var openAPIJSON = sync.OnceValues(func() ([]byte, error) {
	// Parsed on first request, not at start, to keep it off the functions' cold start.
	doc, err := openapi3.NewLoader().LoadFromData(OpenAPIYAML)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
})

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	body, err := openAPIJSON()
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(body)
}
