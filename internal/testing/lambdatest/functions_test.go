package lambdatest_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/awsclient"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/channel"
	"github.com/openvitals/openvitals/internal/fanout"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumstore"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
	"github.com/openvitals/openvitals/internal/testing/lambdatest"
	"github.com/openvitals/openvitals/internal/ux"
)

// TestMain removes the function binaries the tests built.
func TestMain(m *testing.M) { lambdatest.Main(m) }

// repoRoot is the repository's top directory (tests run in internal/testing/lambdatest).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestMakefileBuildsWhatTheTestsStart keeps the Makefile's build and Build in step: the same
// flags, the Makefile's functions are the directories under functions/, and each of them is a
// Lambda function (it calls lambda.Start).
func TestMakefileBuildsWhatTheTestsStart(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LAMBDA_GOFLAGS\s*:=\s*(.*)$`).FindSubmatch(raw)
	want := "-tags lambda.norpc -trimpath -ldflags='-s -w'"
	if m == nil || strings.TrimSpace(string(m[1])) != want {
		t.Errorf("Makefile LAMBDA_GOFLAGS = %q, want %q", m, want)
	}
	if got := strings.Join(lambdatest.BuildFlags, " "); got != strings.ReplaceAll(want, "'", "") {
		t.Errorf("lambdatest.BuildFlags %q, the Makefile builds with %q", got, want)
	}
	if !regexp.MustCompile(`(?m)^LAMBDA_GOENV\s*:=\s*GOOS=linux GOARCH=arm64 CGO_ENABLED=0\s*$`).Match(raw) {
		t.Error("Makefile LAMBDA_GOENV is not GOOS=linux GOARCH=arm64 CGO_ENABLED=0")
	}

	derive := `(?m)^LAMBDA_FUNCTIONS\s*:=\s*\$\(sort \$\(patsubst functions/%/main.go,%,\$\(wildcard functions/\*/main.go\)\)\)\s*$`
	if !regexp.MustCompile(derive).Match(raw) {
		t.Error("the Makefile's LAMBDA_FUNCTIONS is not derived from functions/*/main.go")
	}
	dirs, err := os.ReadDir(filepath.Join(repoRoot(t), "functions"))
	if err != nil {
		t.Fatal(err)
	}
	built := lambdatest.Functions(t)
	for _, d := range dirs {
		if !slices.Contains(built, d.Name()) {
			t.Errorf("functions/%s has no main.go: functions/ holds exactly the deployed Lambda functions", d.Name())
		}
	}
	for _, name := range built {
		src, err := os.ReadFile(filepath.Join(repoRoot(t), "functions", name, "main.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), "lambda.Start(") {
			t.Errorf("functions/%s does not call lambda.Start: local programs belong under cmd/", name)
		}
	}
}

// env is a test's own resources on the stand-ins, and the configuration that points a
// function at them as the stack would.
type env struct {
	st     *store.Store
	rums   *rumstore.Store
	config lambdatest.Config
	site   model.Website
	page   model.Page
}

const adminKey = "ov_lambdatest_functions_admin_key"

// newEnv creates a table with an admin key, a website with one page, every queue, and an S3
// stand-in with the bucket, and the Config that points a function at them.
func newEnv(t *testing.T) (*env, awsclient.Clients, map[string]string) {
	t.Helper()
	clients := awstest.Clients(t)
	st := awstest.Store(t, clients)
	ctx := context.Background()
	apitest.Provision(t, st, apikey.Grant{Account: "acme", Role: model.RoleAdmin, Key: adminKey})
	pages := []model.Page{{URL: "/", Alias: "Home"}}
	site, _ := awstest.Website(t, st, model.Website{Account: "acme", Domain: "localhost", DisplayName: "Local"}, pages)
	cfg := service.Config{Table: st.Table()}
	cfg.NameQueues(awstest.Queues(t, clients))
	urls := map[string]string{
		"purge": cfg.PurgeQueue, "audit": cfg.AuditQueue, "multistep": cfg.MultistepQueue, "fanout": cfg.FanoutQueue, "ux": cfg.UXQueue,
		"rum": cfg.RUMQueue, "beacon": cfg.BeaconQueue, "notify": cfg.NotifyQueue,
	}

	// The purge worker lists and deletes objects: give the functions an S3 stand-in of the
	// test's own, reached like the others through AWS_ENDPOINT_URL_S3.
	s3srv := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(s3srv.Close)
	bucket := awstest.Name(t)
	s3c := s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(s3srv.URL), UsePathStyle: true,
		Credentials: aws.AnonymousCredentials{},
	})
	cfg.Bucket = bucket
	if err := blobstore.New(s3c, bucket).Create(ctx); err != nil {
		t.Fatal(err)
	}
	cfg.RUMBucket = bucket + "-rum"
	rumObjects := blobstore.New(s3c, cfg.RUMBucket)
	if err := rumObjects.Create(ctx); err != nil {
		t.Fatal(err)
	}
	// Every function is configured with the export bucket, as the stack configures it.
	cfg.ExportBucket = bucket + "-exports"
	if err := blobstore.New(s3c, cfg.ExportBucket).Create(ctx); err != nil {
		t.Fatal(err)
	}
	browser := filepath.Join(repoRoot(t), "layers", "browser")
	return &env{
		st: st, site: site, page: pages[0], rums: rumstore.New(st, rumObjects, 400*24*time.Hour, awstest.Log(t)),
		config: lambdatest.Config{
			Env: append(cfg.ResourceEnv(),
				"AWS_ENDPOINT_URL_S3="+s3srv.URL,
				// What the browser image sets (the audit worker checks them at start).
				"OPENVITALS_CHROMIUM_BIN=/usr/lib/chromium/chromium",
				"OPENVITALS_NODE="+filepath.Join(browser, "node_modules", ".bin", "node"),
				"OPENVITALS_LIGHTHOUSE_RUNNER="+filepath.Join(browser, "runner.mjs"),
				// A fixed key in place of the CDK-generated secret.
				"OPENVITALS_CREDENTIALS_KEY="+credentialsKey,
				// A purge ends in one pass (the purgeworker tests cover the later passes).
				"OPENVITALS_PURGE_SETTLE_SECONDS=0",
				// The CrUX key as the stack's secret starts: blank, so CrUX is left out.
				"OPENVITALS_CRUX_API_KEY= ",
				"OPENVITALS_CRUX_QUERIES_PER_MINUTE=75",
				"OPENVITALS_API_URL=https://openvitals.example",
				"OPENVITALS_RUM_RETENTION_DAYS=400",
				"OPENVITALS_REPORT_RETENTION_DAYS=90",
				"OPENVITALS_EXPORT_RETENTION_DAYS=731",
			),
		},
	}, clients, urls
}

// start builds function name and starts it under a fresh fake Runtime API.
func start(t *testing.T, name string, e *env) *lambdatest.Function {
	t.Helper()
	return lambdatest.Start(t, lambdatest.Build(t, name), lambdatest.New(t), e.config)
}

// invoke sends one event and returns the function's answer.
func invoke(t *testing.T, fn *lambdatest.Function, event any) []byte {
	t.Helper()
	raw, ok := event.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(event); err != nil {
			t.Fatal(err)
		}
	}
	// Only a guard against a hung function, not a speed requirement.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := fn.Invoke(ctx, raw)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	return out
}

// httpEvent is an API Gateway HTTP API (payload 2.0) event as the $default stage delivers it.
func httpEvent(method, path, query, key string) []byte {
	headers := map[string]string{
		"accept": "application/json", "host": "abcdef1234.execute-api.us-east-1.amazonaws.com",
		"user-agent": "curl/8.5.0", "x-forwarded-for": "203.0.113.7", "x-forwarded-port": "443",
		"x-forwarded-proto": "https", "content-length": "0",
	}
	if key != "" {
		headers["authorization"] = "Bearer " + key
	}
	ev := map[string]any{
		"version": "2.0", "routeKey": method + " " + path, "rawPath": path, "rawQueryString": query,
		"headers": headers,
		"requestContext": map[string]any{
			"accountId": "123456789012", "apiId": "abcdef1234",
			"domainName": "abcdef1234.execute-api.us-east-1.amazonaws.com", "domainPrefix": "abcdef1234",
			"http": map[string]any{
				"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "203.0.113.7", "userAgent": "curl/8.5.0",
			},
			"requestId": "B2xkFjOzIAMEVXw=", "routeKey": method + " " + path, "stage": "$default",
			"time": "22/Nov/2026:03:19:27 +0000", "timeEpoch": 1795317567000,
		},
		"isBase64Encoded": false,
	}
	b, _ := json.Marshal(ev)
	return b
}

// sqsEvent is an SQS event of one message per body, as Lambda's event source delivers them.
// FIFO messages carry a group and a sequence number.
func sqsEvent(queueURL string, fifo bool, bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	arn := "arn:aws:sqs:us-east-1:123456789012:" + queueURL[strings.LastIndex(queueURL, "/")+1:]
	for i, b := range bodies {
		attrs := map[string]string{
			"ApproximateReceiveCount": "1", "SentTimestamp": "1795317567000",
			"SenderId": "AROAEXAMPLE", "ApproximateFirstReceiveTimestamp": "1795317567001",
		}
		if fifo {
			attrs["MessageGroupId"] = "g"
			attrs["MessageDeduplicationId"] = "d" + string(rune('0'+i))
			attrs["SequenceNumber"] = "1879000000000000000" + string(rune('0'+i))
		}
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: "0c1d2e3f-0000-4000-8000-00000000000" + string(rune('0'+i)), ReceiptHandle: "rh",
			Body: b, Attributes: attrs, MessageAttributes: map[string]events.SQSMessageAttribute{},
			EventSource: "aws:sqs", EventSourceARN: arn, AWSRegion: "us-east-1",
		})
	}
	return ev
}

// failures decodes a partial batch response into the failed message ids.
func failures(t *testing.T, out []byte) []string {
	t.Helper()
	var resp events.SQSEventResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("not a batch response: %v\n%s", err, out)
	}
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// TestEveryFunctionAnswersItsEvent starts each deployed function's bootstrap under the fake
// Runtime API, configured as the stack configures it, and sends it one real event of its
// kind: API Gateway HTTP events to the API functions, an EventBridge event to the scheduler,
// SQS events to the queue consumers. Every function under functions/ must have a case here.
// credentialsKey stands in for the CDK-generated secret.
const credentialsKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

func TestEveryFunctionAnswersItsEvent(t *testing.T) {
	e, clients, urls := newEnv(t)
	ctx := context.Background()
	w, p := e.site.ID, e.page.ID

	// api checks an API function's answer to one request: the status, JSON, and the OpenAPI
	// document's shape; contains is text the body must hold.
	api := func(name, method, path, query, key string, status int, contains string) func(t *testing.T) {
		return func(t *testing.T) {
			out := invoke(t, start(t, name, e), httpEvent(method, path, query, key))
			var resp events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatalf("not a proxy response: %v\n%s", err, out)
			}
			if resp.StatusCode != status || !strings.Contains(resp.Body, contains) {
				t.Fatalf("%s %s: status %d, body %s; want %d with %q", method, path, resp.StatusCode, resp.Body, status, contains)
			}
			if strings.HasPrefix(apitest.GatewayHeader(resp).Get("Content-Type"), "application/") {
				apitest.CheckGateway(t, method, path+"?"+query, resp)
			}
		}
	}

	cases := map[string]func(t *testing.T){
		"websites":  api("websites", "GET", "/websites", "", adminKey, 200, `"id":"`+w+`"`),
		"pages":     api("pages", "GET", "/"+w+"/settings/pages", "", adminKey, 200, `"id":"`+p+`"`),
		"budgets":   api("budgets", "GET", "/"+w+"/budgets", "", adminKey, 200, `"list":[]`),
		"multistep": api("multistep", "GET", "/"+w+"/multistep", "", adminKey, 200, `"list":[]`),
		"lab":       api("lab", "GET", "/"+w+"/pages", "", adminKey, 200, p),
		"field":     api("field", "GET", "/"+w+"/field-testing/pages", "", adminKey, 200, `"result"`),
		"events":    api("events", "GET", "/"+w+"/events", "", adminKey, 200, `"list":[]`),
		// Public: the dashboard's page, which names its hashed script.
		"web": api("web", "GET", "/app/", "", "", 200, `<script type="module" src="/app/app.`),

		// A channel's test to a webhook on loopback: the guard refuses the address (the
		// functions run without OPENVITALS_ALLOW_PRIVATE_TARGETS), the attempt is recorded and
		// not retried; an unreadable message fails alone.
		"notifier": func(t *testing.T) {
			key, err := seal.ParseKey(credentialsKey)
			if err != nil {
				t.Fatal(err)
			}
			c := model.Channel{ID: model.NewChannelID(), Name: "hook", Kind: channel.Webhook}
			if err := channel.Seal(ctx, seal.FixedKey(key), e.site, &c, channel.Target{URL: "http://127.0.0.1:9/hook", Secret: channel.NewSecret()}); err != nil {
				t.Fatal(err)
			}
			if err := e.st.CreateChannel(ctx, e.site, &c); err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(notify.Job{Account: "acme", Website: w, Channel: c.ID, Sample: true, Attempt: 1})
			ev := sqsEvent(urls["notify"], false, string(body), "not a job")
			if f := failures(t, invoke(t, start(t, "notifier", e), ev)); !slices.Equal(f, []string{ev.Records[1].MessageId}) {
				t.Fatalf("batch failures %v, want only the unreadable message %s", f, ev.Records[1].MessageId)
			}
			ds, _, _, err := e.st.Deliveries(ctx, e.site, c.ID, "", 0)
			if err != nil || len(ds) != 1 || !strings.Contains(ds[0].Error, "refused") || !ds[0].Retry.IsZero() {
				t.Errorf("deliveries %+v (%v), want one refused attempt, not retried", ds, err)
			}
		},

		// Public: no key. The snippet names the website it reports for.
		"rum": func(t *testing.T) {
			out := invoke(t, start(t, "rum", e), httpEvent("GET", "/rum/"+w+".js", "", ""))
			var resp events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatalf("not a proxy response: %v\n%s", err, out)
			}
			ct := ""
			for k, v := range resp.Headers {
				if strings.EqualFold(k, "content-type") {
					ct = v
				}
			}
			if resp.StatusCode != 200 || !strings.Contains(ct, "javascript") || !strings.Contains(resp.Body, w) {
				t.Fatalf("GET /rum/%s.js: status %d, content-type %q, body of %d bytes naming the website: %v",
					w, resp.StatusCode, ct, len(resp.Body), strings.Contains(resp.Body, w))
			}
		},

		// A daily EventBridge rule naming no job: the fan-out of each daily job starts with one
		// message.
		"scheduler": func(t *testing.T) {
			ev := map[string]any{
				"version": "0", "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa", "detail-type": "Scheduled Event",
				"source": "aws.events", "account": "123456789012", "time": time.Now().UTC().Format(time.RFC3339),
				"region": "us-east-1", "resources": []string{"arn:aws:events:us-east-1:123456789012:rule/DailySchedule"},
				"detail": map[string]any{},
			}
			var res struct {
				Fanouts []string `json:"fanouts"`
			}
			out := invoke(t, start(t, "scheduler", e), ev)
			if err := json.Unmarshal(out, &res); err != nil || !slices.Equal(res.Fanouts, fanout.Jobs) {
				t.Fatalf("scheduler answered %s (%v), want the fan-out of every daily job started (%v)", out, err, fanout.Jobs)
			}
			q, err := queue.Open(ctx, clients.SQS, urls["fanout"])
			if err != nil {
				t.Fatal(err)
			}
			if got := awstest.Receive(t, q, len(fanout.Jobs)); len(got) != len(fanout.Jobs) {
				t.Errorf("%d fan-out messages queued, want one a job (%d)", len(got), len(fanout.Jobs))
			}
		},

		// A website's message of the daily audits: one audit per page and device; an unreadable
		// message fails alone.
		"fanout-worker": func(t *testing.T) {
			day := model.Day(time.Now().UTC())
			body, _ := json.Marshal(fanout.Job{Day: day, Job: fanout.JobAudits, Account: "acme", Website: w})
			ev := sqsEvent(urls["fanout"], false, string(body), `{"day":"today"}`)
			if f := failures(t, invoke(t, start(t, "fanout-worker", e), ev)); !slices.Equal(f, []string{ev.Records[1].MessageId}) {
				t.Fatalf("batch failures %v, want only the unreadable message %s", f, ev.Records[1].MessageId)
			}
			q, err := queue.Open(ctx, clients.SQS, urls["audit"])
			if err != nil {
				t.Fatal(err)
			}
			got := awstest.Receive(t, q, 2)
			for _, b := range got {
				var j audit.Job
				if err := json.Unmarshal([]byte(b), &j); err != nil || j.Day != day || j.Attempt != 1 || j.Page != e.page.ID {
					t.Errorf("audit %s (%v): want the page's, of today, attempt 1", b, err)
				}
			}
			if len(got) != 2 {
				t.Errorf("%d audit messages queued, want 2", len(got))
			}
		},

		// A page deletion: the purge worker removes what it left, marker included.
		"purge-worker": func(t *testing.T) {
			other := []model.Page{{URL: "/gone"}}
			if err := e.st.CreatePages(ctx, e.site, other); err != nil {
				t.Fatal(err)
			}
			job, err := e.st.DeletePage(ctx, e.site, other[0])
			if err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(job)
			if f := failures(t, invoke(t, start(t, "purge-worker", e), sqsEvent(urls["purge"], false, string(body)))); len(f) != 0 {
				t.Fatalf("purge failed: %v", f)
			}
			if n, err := e.st.CountItems(ctx, job); err != nil || n != 0 {
				t.Errorf("%d items of the deleted page left (%v)", n, err)
			}
			if pending, err := e.st.PendingPurges(ctx); err != nil || len(pending) != 0 {
				t.Errorf("pending purges after the purge: %v (%v)", pending, err)
			}
		},

		// The website is localhost: the worker refuses it before starting a browser and
		// records why on the page, finally: every delivery would be refused alike, so the
		// message is not handed back to SQS.
		"audit-worker": func(t *testing.T) {
			body, _ := json.Marshal(audit.Job{Account: "acme", Website: w, Page: p, Device: "mobile", Queued: time.Now().UTC()})
			ev := sqsEvent(urls["audit"], false, string(body))
			if f := failures(t, invoke(t, start(t, "audit-worker", e), ev)); len(f) != 0 {
				t.Fatalf("batch failures %v, want none: the refusal is final", f)
			}
			le, err := e.st.LastLabError(ctx, e.site, p, "mobile")
			if err != nil || !strings.Contains(le.Message, "refused") || !le.Final {
				t.Errorf("page's last error %+v (%v), want the refusal", le, err)
			}
		},

		// A redelivered message of a run already completed is done with; an unreadable one
		// fails alone.
		"multistep-worker": func(t *testing.T) {
			test := model.Test{Alias: "Signup", Device: "desktop", Steps: []step.Step{{Type: "navigate", Target: "/"}}}
			if err := e.st.CreateTest(ctx, e.site, &test); err != nil {
				t.Fatal(err)
			}
			run, err := e.st.CreateRun(ctx, e.site, test)
			if err != nil {
				t.Fatal(err)
			}
			run.Status, run.Finished = model.RunCompleted, time.Now().UTC()
			if err := e.st.UpdateRun(ctx, e.site, run); err != nil {
				t.Fatal(err)
			}
			body, _ := json.Marshal(multistep.Job{Account: "acme", Website: w, Test: test.ID, Run: run.ID, Created: run.Created})
			ev := sqsEvent(urls["multistep"], false, string(body), "not a job")
			if f := failures(t, invoke(t, start(t, "multistep-worker", e), ev)); !slices.Equal(f, []string{ev.Records[1].MessageId}) {
				t.Fatalf("batch failures %v, want only the unreadable message %s", f, ev.Records[1].MessageId)
			}
			got, err := e.st.GetRun(ctx, e.site, test.ID, run.Created, run.ID)
			if err != nil || got.Status != model.RunCompleted {
				t.Errorf("run after redelivery: %+v (%v), want it completed as before", got, err)
			}
		},

		// A website's daily collection. Without a CrUX key (the stack's secret starts blank)
		// and without the Search Console integration, it finishes with nothing to store, and
		// says so in the day's run record.
		"ux-worker": func(t *testing.T) {
			day := time.Now().UTC().Format("20060102")
			body, _ := json.Marshal(ux.Job{Account: "acme", Website: w, Day: day, Queued: time.Now().UTC()})
			if f := failures(t, invoke(t, start(t, "ux-worker", e), sqsEvent(urls["ux"], false, string(body)))); len(f) != 0 {
				t.Fatalf("collection failed: %v", f)
			}
			run, err := e.st.UXRun(ctx, e.site, day)
			if err != nil || run.Finished.IsZero() || run.UXRecords != 0 || run.SearchPages != 0 {
				t.Errorf("ux run of %s: %+v (%v), want a finished run with nothing collected", day, run, err)
			}
		},

		// Three single-view messages of the beacon queue become one entry of the website's log
		// and one message of the FIFO queue asking the aggregator to fold it.
		"rum-batcher": func(t *testing.T) {
			var bodies []string
			for _, page := range []string{"/", "/a", "/b"} {
				body, _ := json.Marshal(rum.Batch{ID: "c-" + page, Account: "acme", Website: w, Views: []rum.View{{
					Day: "20261122", Page: page, Country: "DE", Metrics: map[string]float64{"lcp": 1000},
				}}})
				bodies = append(bodies, string(body))
			}
			if f := failures(t, invoke(t, start(t, "rum-batcher", e), sqsEvent(urls["beacon"], false, bodies...))); len(f) != 0 {
				t.Fatalf("regrouping failed: %v", f)
			}
			q, err := queue.Open(ctx, awstest.Clients(t).SQS, urls["rum"])
			if err != nil {
				t.Fatal(err)
			}
			got := awstest.Receive(t, q, 1)
			var b rum.Batch
			if len(got) != 1 || json.Unmarshal([]byte(got[0]), &b) != nil || len(b.Views) != 0 || b.Website != w {
				t.Fatalf("FIFO queue holds %v, want one request to fold the website's log", got)
			}
			log, _, err := e.rums.Pending(ctx, "acme", w)
			if err != nil || len(log) != 1 || log[0].Views != 3 {
				t.Fatalf("the website's log: %+v (%v), want one entry of the three views", log, err)
			}
		},

		// One page view from the FIFO queue (as an earlier version queued it) lands in the
		// website's report, as does the log the rebatcher left, when asked to fold it.
		"rum-aggregator": func(t *testing.T) {
			day := time.Now().UTC()
			body, _ := json.Marshal(rum.Batch{ID: "b1", Account: "acme", Website: w, Views: []rum.View{{
				Day: day.Format("20060102"), Page: "/", Country: "DE", Metrics: map[string]float64{"lcp": 1234},
			}}})
			flush, _ := json.Marshal(rum.Batch{ID: "f1", Account: "acme", Website: w})
			if f := failures(t, invoke(t, start(t, "rum-aggregator", e), sqsEvent(urls["rum"], true, string(body), string(flush)))); len(f) != 0 {
				t.Fatalf("aggregation failed: %v", f)
			}
			rep, err := rum.NewReader(e.rums).Report(ctx, rum.Query{Account: "acme", Website: w, Dim: rum.DimPages, Metrics: []string{"lcp"}, From: day, To: day})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Views != 1 || len(rep.Rows) != 1 || math.Abs(rep.Rows[0].P75["lcp"]-1234)/1234 > 0.01 {
				t.Errorf("report %+v, want one view of / with lcp 1234 (within the sketch's 1%%)", rep)
			}
		},
	}

	for _, name := range lambdatest.Functions(t) {
		c, ok := cases[name]
		if !ok {
			t.Errorf("function %s has no event case here", name)
			continue
		}
		t.Run(name, c)
	}
}
