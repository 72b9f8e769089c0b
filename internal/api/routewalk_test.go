package api_test

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// routeFixture is a website of acme with one of each thing a path names, so that a request
// built from any route's pattern reaches the thing its last path value names.
type routeFixture struct {
	values map[string]string // path variable -> an existing value
}

// newRouteFixture makes a website with a page, a budget, a multistep test, a channel and a
// regression.
func newRouteFixture(t testing.TB, e *testEnv) routeFixture {
	t.Helper()
	site := e.createWebsite("example.com")
	w := "/" + site.ID
	pg := e.createPages(site.ID, "/")[0]
	var b budget
	e.do("POST", w+"/budgets", apitest.AdminKey, `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`).Want(t, 201).Decode(t, &b)
	var test multistepTest
	e.do("POST", w+"/multistep", apitest.AdminKey, `{"alias":"t","device":"mobile","steps":[{"type":"navigate","target":"/"}]}`).Want(t, 201).Decode(t, &test)
	var ch channelOut
	e.do("POST", w+"/channels", apitest.AdminKey, `{"name":"c","kind":"slack","url":"https://hooks.slack.com/services/x"}`).Want(t, 201).Decode(t, &ch)
	var prof profileOut
	e.do("POST", w+"/profiles", apitest.AdminKey, `{"name":"p"}`).Want(t, 201).Decode(t, &prof)
	ctx := context.Background()
	stored := e.storedWebsite(site.ID)
	reg := model.Regression{Kind: model.KindRegression, Source: "lab", Page: pg.ID, Device: "mobile", Metric: "lcp",
		LastGood: "20261110", FirstBad: "20261111", Before: model.Level{Median: 1500}, After: model.Level{Median: 2100},
		Delta: 600, Percent: 40, P: 0.0001, Status: model.RegressionOpen, Detected: time.Now()}
	reg.ID = model.RegressionID(stored, "lab/"+pg.ID+"/mobile/lcp", reg.FirstBad)
	if _, err := e.store.PutRegression(ctx, stored, reg); err != nil {
		t.Fatal(err)
	}
	return routeFixture{values: map[string]string{
		"websiteID": site.ID, "pageID": pg.ID, "budgetID": b.ID, "testID": test.ID, "channelID": ch.ID, "regressionID": reg.ID,
		"incidentID": model.IncidentID(stored, reg.Subject(), reg.Kind, reg.FirstBad),
		"profileID":  prof.ID, "experimentID": "exp_nosuchexperiment",
		"file": site.ID + ".js", "file...": "index.html",
		// Nothing of these exists: the path still reaches their lookup.
		"runID": "nosuchrun", "seriesID": "ts_nosuchseries", "opportunityID": "render-blocking-resources",
		"name": "0123456789abcdef.jpg",
	}}
}

var pathVariable = regexp.MustCompile(`\{([^}]*)\}`)

// variables lists the path variables of a route pattern, in order.
func variables(pattern string) []string {
	var out []string
	for _, m := range pathVariable.FindAllStringSubmatch(pattern, -1) {
		out = append(out, m[1])
	}
	return out
}

// path fills a pattern with the fixture's values, except those of over.
func (f routeFixture) path(t testing.TB, pattern string, over map[string]string) string {
	t.Helper()
	return pathVariable.ReplaceAllStringFunc(pattern, func(v string) string {
		name := v[1 : len(v)-1]
		if val, ok := over[name]; ok {
			return val
		}
		val, ok := f.values[name]
		if !ok {
			t.Fatalf("the route fixture has no value for {%s}: add one", name)
		}
		return val
	})
}

// walkRoute is one route of the route table, as a request to send.
type walkRoute struct {
	Method, Pattern, Access string
}

// tableRoutes lists every route of the route table, those that delete last (the website's
// deletion the very last), so that a walk reaches everything before it is gone.
func tableRoutes(t testing.TB) []walkRoute {
	t.Helper()
	var out []walkRoute
	for _, rt := range routeTable(t).Routes {
		out = append(out, walkRoute{rt.Method, rt.Pattern, rt.Access})
	}
	rank := func(r walkRoute) int {
		switch {
		case r.Method == "DELETE" && r.Pattern == "/{websiteID}":
			return 2
		case r.Method == "DELETE":
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(a, b walkRoute) int { return rank(a) - rank(b) })
	return out
}

// request sends one request of a route to path: with the admin key (none on public routes), and
// an empty JSON object as the body of POST and PUT.
func (e *testEnv) request(rt walkRoute, path string) response {
	e.t.Helper()
	key := apitest.AdminKey
	if rt.Access == "public" {
		key = ""
	}
	var body any
	if rt.Method == http.MethodPost || rt.Method == http.MethodPut {
		body = `{}`
	}
	return e.do(rt.Method, path, key, body)
}

// TestOverlongPathValues sends every route of the route table, in turn, an over-long value in
// each of its path variables (longer than any key DynamoDB takes): each is answered 404 or
// 400, never a 5xx, and changes nothing.
func TestOverlongPathValues(t *testing.T) {
	e := newTestEnv(t)
	f := newRouteFixture(t, e)
	long := strings.Repeat("a", 1100)
	sent := 0
	for _, rt := range tableRoutes(t) {
		for _, v := range variables(rt.Pattern) {
			path := f.path(t, rt.Pattern, map[string]string{v: long})
			res := e.request(rt, path)
			sent++
			if res.Status != http.StatusNotFound && res.Status != http.StatusBadRequest {
				t.Errorf("%s %s with {%s} of %d bytes: %d %s, want 404 or 400", rt.Method, rt.Pattern, v, len(long), res.Status, res.Body)
			}
		}
	}
	if sent < 40 {
		t.Fatalf("%d requests sent: the walk missed routes", sent)
	}
	// Nothing was deleted.
	e.do("GET", "/"+f.values["websiteID"]+"/channels/"+f.values["channelID"], apitest.ViewerKey, nil).Want(t, 200)
}

// TestNosniff: every answer of every route, successes and problems alike, and the answers of
// paths and methods no route serves, tell browsers not to sniff their content type.
func TestNosniff(t *testing.T) {
	e := newTestEnv(t)
	f := newRouteFixture(t, e)
	check := func(what string, res response) {
		t.Helper()
		if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: %d with X-Content-Type-Options %q, want nosniff", what, res.Status, got)
		}
	}
	for _, rt := range tableRoutes(t) {
		check(rt.Method+" "+rt.Pattern, e.request(rt, f.path(t, rt.Pattern, nil)))
	}
	check("an unknown path", e.do("GET", "/nosuch/path/at/all", apitest.AdminKey, nil).Want(t, 404))
	check("an unknown method", e.do("PATCH", "/websites", apitest.AdminKey, nil).Want(t, 405))
	check("no key", e.do("GET", "/websites", "", nil).Want(t, 401))
}

// TestNullBodies sends JSON null as the body of every route that takes one (the operations of
// the OpenAPI document with a request body): each refuses it with a 400 problem, and nothing
// changes.
func TestNullBodies(t *testing.T) {
	doc, err := loadYAML()
	if err != nil {
		t.Fatal(err)
	}
	takesBody := map[string]bool{} // method and pattern, wildcards as {}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody != nil {
				takesBody[method+" "+wildcard.ReplaceAllString(path, "{}")] = true
			}
		}
	}
	e := newTestEnv(t)
	f := newRouteFixture(t, e)
	e.do("PUT", "/"+f.values["websiteID"]+"/regression-thresholds", apitest.AdminKey, `{"lcp":{"relative":0.2}}`).Want(t, 200)
	before := e.do("GET", "/"+f.values["websiteID"]+"/regression-thresholds", apitest.ViewerKey, nil).Want(t, 200).Body
	n := 0
	for _, rt := range tableRoutes(t) {
		if !takesBody[rt.Method+" "+wildcard.ReplaceAllString(rt.Pattern, "{}")] {
			continue
		}
		n++
		key := apitest.AdminKey
		if rt.Access == "public" {
			key = ""
		}
		res := e.do(rt.Method, f.path(t, rt.Pattern, nil), key, `null`)
		if res.Status != http.StatusBadRequest {
			t.Errorf("%s %s with a null body: %d %s, want 400", rt.Method, rt.Pattern, res.Status, res.Body)
			continue
		}
		res.Problem(t)
	}
	if n < 15 {
		t.Fatalf("%d routes take a body: the walk missed some", n)
	}
	if after := e.do("GET", "/"+f.values["websiteID"]+"/regression-thresholds", apitest.ViewerKey, nil).Want(t, 200).Body; string(after) != string(before) {
		t.Errorf("refused bodies changed the thresholds: %s, then %s", before, after)
	}
	if visible, inFlight, err := e.audits.Depth(context.Background()); err != nil || visible+inFlight != 0 {
		t.Errorf("refused bodies queued %d+%d audits (%v)", visible, inFlight, err)
	}
}
