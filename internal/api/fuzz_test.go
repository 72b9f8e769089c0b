package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/openvitals/openvitals/internal/awstest"
)

// FuzzRequestBodies sends arbitrary bodies to every route that takes one (the POST and PUT
// routes of routes.json) through the whole API against DynamoDB Local. No body may answer 500
// or panic, and a refused body (4xx) changes nothing stored: the table holds as many items
// afterwards. Seeds: testdata/fuzz/FuzzRequestBodies (route index, body); `make fuzz` runs it
// for a bounded time with one worker (the item count is global).
func FuzzRequestBodies(f *testing.F) {
	e := newTestEnv(f)
	site := e.createWebsite("example.com")
	var pages []page
	e.do("POST", "/"+site.ID+"/settings/pages", adminKey, `[{"url":"/","alias":"Home"}]`).want(f, 200).decode(f, &pages)
	var b budget
	e.do("POST", "/"+site.ID+"/budgets", adminKey, `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`).want(f, 201).decode(f, &b)
	var test multistepTest
	e.do("POST", "/"+site.ID+"/multistep", adminKey, `{"alias":"t","device":"mobile","steps":[{"type":"navigate","target":"/"}]}`).want(f, 201).decode(f, &test)
	w := "/" + site.ID
	routes := []struct{ method, path string }{
		{"POST", "/account/websites"},
		{"PUT", w + "/integrations/search-console"},
		{"POST", w + "/settings/pages"},
		{"PUT", w + "/settings/" + pages[0].ID},
		{"POST", w + "/budgets"},
		{"PUT", w + "/budgets/" + b.ID},
		{"POST", w + "/multistep"},
		{"PUT", w + "/multistep/" + test.ID},
		{"POST", w + "/multistep/run-all"},
		{"POST", w + "/multistep/" + test.ID + "/runs"},
		{"POST", w + "/audits"},
		{"POST", "/collect"},
		{"POST", w + "/testseries"},
	}
	clients := awstest.Clients(f)
	count := func(t *testing.T) int32 {
		out, err := clients.DynamoDB.Scan(context.Background(), &dynamodb.ScanInput{
			TableName: aws.String(e.store.Table()), Select: ddbtypes.SelectCount, ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		return out.Count
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		r := routes[int(route)%len(routes)]
		before := count(t)
		req := httptest.NewRequest(r.method, r.path, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+adminKey)
		if r.path == "/collect" {
			req.Header.Set("Content-Type", "text/plain")
			req.Header.Del("Authorization")
		}
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		if rec.Code >= http.StatusInternalServerError {
			t.Fatalf("%s %s %q: %d %s", r.method, r.path, body, rec.Code, rec.Body)
		}
		if rec.Code >= 400 {
			if after := count(t); after != before {
				t.Fatalf("%s %s %q refused with %d changed the table: %d items, %d before", r.method, r.path, body, rec.Code, after, before)
			}
		}
	})
}
