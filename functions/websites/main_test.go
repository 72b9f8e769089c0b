package main_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/benchtest"
	"github.com/openvitals/openvitals/internal/testing/lambdatest"
)

// TestMain removes the function binary that the tests and the benchmark share.
func TestMain(m *testing.M) { lambdatest.Main(m) }

// gatewayEvent is a request as an API Gateway HTTP API (payload format 2.0, $default stage and
// route) delivers it, written out as JSON rather than built from the aws-lambda-go structs, so
// that the test also covers the field names and encodings the adapter has to understand. A
// body is handed over base64-encoded (isBase64Encoded), as API Gateway does with some; key ""
// leaves the authorization header out.
func gatewayEvent(method, path, key, body string) []byte {
	auth, bodyHeaders, bodyField := "", "", ""
	if key != "" {
		auth = "\n    \"authorization\": \"Bearer " + key + "\","
	}
	if body != "" {
		bodyHeaders = "\n    \"content-type\": \"application/json\","
		bodyField = "\n  \"body\": \"" + base64.StdEncoding.EncodeToString([]byte(body)) + "\","
	}
	return []byte(strings.NewReplacer("{{METHOD}}", method, "{{PATH}}", path, "{{AUTH}}", auth, "{{LENGTH}}", strconv.Itoa(len(body)),
		"{{BODY_HEADERS}}", bodyHeaders, "{{BODY}}", bodyField, "{{BASE64}}", strconv.FormatBool(body != "")).Replace(`{
  "version": "2.0",
  "routeKey": "$default",
  "rawPath": "{{PATH}}",
  "rawQueryString": "",
  "headers": {
    "accept": "application/json",{{AUTH}}
    "content-length": "{{LENGTH}}",{{BODY_HEADERS}}
    "host": "abcdef1234.execute-api.us-east-1.amazonaws.com",
    "user-agent": "curl/8.5.0",
    "x-amzn-trace-id": "Root=1-6740f1a2-0c1d2e3f4a5b6c7d8e9f0a1b",
    "x-forwarded-for": "203.0.113.7",
    "x-forwarded-port": "443",
    "x-forwarded-proto": "https"
  },
  "requestContext": {
    "accountId": "123456789012",
    "apiId": "abcdef1234",
    "domainName": "abcdef1234.execute-api.us-east-1.amazonaws.com",
    "domainPrefix": "abcdef1234",
    "http": {
      "method": "{{METHOD}}",
      "path": "{{PATH}}",
      "protocol": "HTTP/1.1",
      "sourceIp": "203.0.113.7",
      "userAgent": "curl/8.5.0"
    },
    "requestId": "B2xkFjOzIAMEVXw=",
    "routeKey": "$default",
    "stage": "$default",
    "time": "22/Nov/2026:03:19:27 +0000",
    "timeEpoch": 1795317567000
  },{{BODY}}
  "isBase64Encoded": {{BASE64}}
}`))
}

// createWebsite is POST /account/websites with the body {"domain":"example.com"}.
func createWebsite(key string) []byte {
	return gatewayEvent("POST", "/account/websites", key, `{"domain":"example.com"}`)
}

// listWebsites is GET /websites.
func listWebsites(key string) []byte { return gatewayEvent("GET", "/websites", key, "") }

// testKey is the admin key provisioned in each test's table.
const testKey = "ov_lambdatest_websites_admin_key"

// fixture is what a run of the websites function needs: its binary, and a table (holding the
// admin key testKey of account "acme") and every queue of its own on the stand-ins.
type fixture struct {
	binary string
	config lambdatest.Config
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	grant := apikey.Grant{Account: "acme", Role: model.RoleAdmin, Key: testKey}
	apitest.Provision(t, st, grant)
	// The websites endpoints never touch the bucket and send only purges, but the function
	// opens every queue the service declares at start: each must exist.
	cfg := service.Config{Table: st.Table(), Bucket: "openvitals-test", RUMBucket: "openvitals-test-rum", ExportBucket: "openvitals-test-exports"}
	cfg.NameQueues(awstest.Queues(t, clients))
	return fixture{binary: lambdatest.Build(t, "websites"), config: lambdatest.Config{
		// A fixed key in place of the stack's secret: in Lambda the function needs one.
		// The retention bounds the stack gives it, which the data settings are checked against.
		Env: append(cfg.ResourceEnv(), service.EnvCredentialsKey+"=AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
			service.EnvReportRetentionDays+"=90", service.EnvRUMRetentionDays+"=400", service.EnvExportRetentionDays+"=731")}}
}

// invoke sends one event and decodes the function's answer as API Gateway would, checking it
// against the OpenAPI document.
func invoke(t testing.TB, fn *lambdatest.Function, ev []byte) events.APIGatewayV2HTTPResponse {
	t.Helper()
	// Only a guard against a hung function, not a speed requirement.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := fn.Invoke(ctx, ev)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("decode the proxy response: %v\n%s", err, out)
	}
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(ev, &req); err != nil {
		t.Fatal(err)
	}
	apitest.CheckGateway(t, req.RequestContext.HTTP.Method, req.RawPath, resp)
	return resp
}

// TestAPIGatewayEvent runs the built websites function under a fake Lambda Runtime API and sends
// it API Gateway events: the deployed binary must start from its environment, route HTTP API
// events through the adapter and answer with proxy responses.
func TestAPIGatewayEvent(t *testing.T) {
	fx := newFixture(t)
	fn := lambdatest.Start(t, fx.binary, lambdatest.New(t), fx.config)

	// Create a website.
	resp := invoke(t, fn, createWebsite(testKey))
	if resp.StatusCode != 201 {
		t.Fatalf("POST /account/websites: status %d, want 201; body %s", resp.StatusCode, apitest.GatewayBody(t, resp))
	}
	if ct := apitest.GatewayHeader(resp).Get("content-type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("POST /account/websites: content-type %q, want application/json", ct)
	}
	var created struct {
		ID          string `json:"id"`
		Domain      string `json:"domain"`
		DisplayName string `json:"displayName"`
	}
	if err := json.Unmarshal([]byte(apitest.GatewayBody(t, resp)), &created); err != nil {
		t.Fatalf("POST /account/websites: body is not JSON: %v\n%s", err, apitest.GatewayBody(t, resp))
	}
	if created.ID == "" || created.Domain != "example.com" || created.DisplayName != "example.com" {
		t.Errorf("POST /account/websites: got %+v, want an id, domain and displayName example.com", created)
	}

	// The same process lists it on its next invocation.
	resp = invoke(t, fn, listWebsites(testKey))
	if resp.StatusCode != 200 {
		t.Fatalf("GET /websites: status %d, want 200; body %s", resp.StatusCode, apitest.GatewayBody(t, resp))
	}
	if ct := apitest.GatewayHeader(resp).Get("content-type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("GET /websites: content-type %q, want application/json", ct)
	}
	var listed struct {
		Result struct {
			List []struct {
				ID          string `json:"id"`
				Domain      string `json:"domain"`
				DisplayName string `json:"displayName"`
			} `json:"list"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(apitest.GatewayBody(t, resp)), &listed); err != nil {
		t.Fatalf("GET /websites: body is not JSON: %v\n%s", err, apitest.GatewayBody(t, resp))
	}
	if l := listed.Result.List; len(l) != 1 || l[0].ID != created.ID || l[0].Domain != "example.com" {
		t.Errorf("GET /websites: list %+v, want only website %s (example.com)", l, created.ID)
	}

	// Without a key: 401 with a challenge and a problem document.
	resp = invoke(t, fn, listWebsites(""))
	if resp.StatusCode != 401 {
		t.Fatalf("GET /websites without authorization: status %d, want 401; body %s", resp.StatusCode, apitest.GatewayBody(t, resp))
	}
	if h := apitest.GatewayHeader(resp).Get("www-authenticate"); !strings.HasPrefix(h, "Bearer") {
		t.Errorf("GET /websites without authorization: www-authenticate %q, want a Bearer challenge", h)
	}
	if ct := apitest.GatewayHeader(resp).Get("content-type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("GET /websites without authorization: content-type %q, want application/problem+json", ct)
	}
	var problem struct {
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal([]byte(apitest.GatewayBody(t, resp)), &problem); err != nil || problem.Status != 401 || problem.Detail == "" {
		t.Errorf("GET /websites without authorization: problem %+v (%v), want status 401 and a detail", problem, err)
	}
}

// BenchmarkColdStart measures a cold start of the websites function as a machine without
// Lambda can show it: from starting the process to its answer to the first event, an authenticated
// GET /websites (one DynamoDB GetItem and one Query). It includes the Go runtime's start,
// reading the configuration, building the AWS clients and the first connections to the
// stand-ins; it excludes what only AWS does (creating the sandbox, fetching the code).
// Every iteration starts and kills a fresh process; run it with a fixed count, -benchtime 20x.
func BenchmarkColdStart(b *testing.B) {
	fx := newFixture(b)
	ev := listWebsites(testKey)
	var samples []time.Duration
	for b.Loop() {
		rt := lambdatest.New(b)
		start := time.Now()
		fn := lambdatest.Start(b, fx.binary, rt, fx.config)
		resp := invoke(b, fn, ev)
		samples = append(samples, time.Since(start))
		fn.Stop()
		rt.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("GET /websites: status %d, want 200; body %s", resp.StatusCode, apitest.GatewayBody(b, resp))
		}
	}
	b.ReportMetric(benchtest.PercentileMS(samples, 0.50), "ms/coldstart-p50")
	b.ReportMetric(benchtest.PercentileMS(samples, 0.99), "ms/coldstart-p99")
	// Reported after the loop: b.Loop resets the timer, which drops earlier metrics.
	if fi, err := os.Stat(fx.binary); err == nil {
		b.ReportMetric(float64(fi.Size())/(1<<20), "MiB-binary")
	}
}
