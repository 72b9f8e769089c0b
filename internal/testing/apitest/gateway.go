package apitest

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/testing/contract"
)

// GatewayBody is the body of a function's answer to API Gateway (payload format 2.0), decoded
// from base64 when the function encoded it.
func GatewayBody(t testing.TB, resp events.APIGatewayV2HTTPResponse) string {
	t.Helper()
	if !resp.IsBase64Encoded {
		return resp.Body
	}
	b, err := base64.StdEncoding.DecodeString(resp.Body)
	if err != nil {
		t.Fatalf("decode base64 body: %v", err)
	}
	return string(b)
}

// CheckGateway checks a function's answer to API Gateway for the request method target (a
// path with its query) against the OpenAPI document, as Do checks an answer over HTTP.
func CheckGateway(t testing.TB, method, target string, resp events.APIGatewayV2HTTPResponse) {
	t.Helper()
	contract.Check(t, httptest.NewRequest(method, target, nil), resp.StatusCode, GatewayHeader(resp), []byte(GatewayBody(t, resp)))
}

// GatewayHeader is the header of a function's answer to API Gateway, its names canonical as
// HTTP's (API Gateway, like HTTP, ignores their case).
func GatewayHeader(resp events.APIGatewayV2HTTPResponse) http.Header {
	h := http.Header{}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	return h
}
