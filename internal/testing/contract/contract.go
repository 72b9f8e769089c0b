// Package contract checks HTTP responses against the interface's OpenAPI document. Tests of
// every layer (handlers, the local service, the Lambda functions) call Check on each response
// they receive, so a response that strays from the documented shapes fails a test.
package contract

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/openvitals/openvitals/internal/api"
)

var router = sync.OnceValues(func() (routers.Router, error) {
	// The RUM snippet, the dashboard's files, Lighthouse's HTML report and the metrics'
	// exposition are text: their bodies are checked as strings.
	for _, ct := range []string{"text/javascript", "text/html", "text/css", "application/openmetrics-text"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPIJSON())
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

// Check fails t unless the response to req is documented: its status, headers and body match
// the operation's description, errors are problem+json, a 204 has no body, and nothing is a
// 5xx. Requests outside the interface may only be answered 404 or 405.
func Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if status >= 500 {
		t.Errorf("%s %s: %d %s", req.Method, req.URL.Path, status, body)
	}
	if status >= 400 && header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("%s %s: %d with Content-Type %q, want application/problem+json", req.Method, req.URL.Path, status, header.Get("Content-Type"))
	}
	if status == http.StatusNoContent && len(body) != 0 {
		t.Errorf("%s %s: 204 with a body: %s", req.Method, req.URL.Path, body)
	}
	r, err := router()
	if err != nil {
		t.Fatalf("OpenAPI document: %v", err)
	}
	route, params, err := r.FindRoute(req)
	if err != nil {
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s is not in the OpenAPI document but answered %d", req.Method, req.URL.Path, status)
		}
		return
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	})
	if err != nil {
		t.Errorf("%s %s: response %d breaks the OpenAPI document: %v\nbody: %s", req.Method, req.URL.Path, status, err, body)
	}
}
