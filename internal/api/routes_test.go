package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// routeDoc is routes.json as the CDK app reads it.
type routeDoc struct {
	DefaultGroup string `json:"defaultGroup"`
	Routes       []struct {
		Group   string `json:"group"`
		Method  string `json:"method"`
		Pattern string `json:"pattern"`
		Access  string `json:"access"`
	} `json:"routes"`
}

func routeTable(t testing.TB) routeDoc {
	t.Helper()
	raw, err := api.RoutesJSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc routeDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestRoutesJSONIsCurrent keeps routes.json, which the CDK app reads, generated from the route
// table.
func TestRoutesJSONIsCurrent(t *testing.T) {
	want, err := api.RoutesJSON()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("routes.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("routes.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("routes.json is stale: run go test ./internal/api -run TestRoutesJSON -update")
	}
}

// wildcard matches a path parameter, named as the table ({websiteID}) or the document
// ({websiteId}) names it.
var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// TestRoutesMatchOpenAPI checks the route table against openapi.yaml: every route is an
// operation of the document and every operation a route, public routes are the operations
// without security, and admin routes the operations marked (admin) that answer 403.
func TestRoutesMatchOpenAPI(t *testing.T) {
	doc, err := loadYAML()
	if err != nil {
		t.Fatal(err)
	}
	type op struct{ method, path string }
	type opInfo struct{ public, admin bool }
	ops := map[op]opInfo{}
	for path, item := range doc.Paths.Map() {
		for method, o := range item.Operations() {
			ops[op{method, wildcard.ReplaceAllString(path, "{}")}] = opInfo{
				public: o.Security != nil && len(*o.Security) == 0,
				admin:  strings.Contains(o.Summary, "(admin)") && o.Responses.Value("403") != nil,
			}
		}
	}
	seen := map[op]bool{}
	for _, rt := range routeTable(t).Routes {
		key := op{rt.Method, wildcard.ReplaceAllString(rt.Pattern, "{}")}
		info, ok := ops[key]
		if !ok {
			t.Errorf("%s %s (%s) is not an operation of openapi.yaml", rt.Method, rt.Pattern, rt.Group)
			continue
		}
		if seen[key] {
			t.Errorf("%s %s is declared twice", rt.Method, rt.Pattern)
		}
		seen[key] = true
		want := "viewer"
		switch {
		case info.public:
			want = "public"
		case info.admin:
			want = "admin"
		}
		if rt.Access != want {
			t.Errorf("%s %s is %s; openapi.yaml makes it %s", rt.Method, rt.Pattern, rt.Access, want)
		}
	}
	for o := range ops {
		if !seen[o] {
			t.Errorf("openapi.yaml has %s %s, which no route serves", o.method, o.path)
		}
	}
}

// TestRoutePatternsBelongToOneGroup checks that API Gateway can send every path pattern to one
// function, that each group is a function the CDK app knows by name, and that the default
// group is one of them.
func TestRoutePatternsBelongToOneGroup(t *testing.T) {
	table := routeTable(t)
	groupOf := map[string]string{}
	for _, rt := range table.Routes {
		if g, ok := groupOf[rt.Pattern]; ok && g != rt.Group {
			t.Errorf("%s belongs to both %s and %s", rt.Pattern, g, rt.Group)
		}
		groupOf[rt.Pattern] = rt.Group
	}
	var groups []string
	for _, g := range api.Groups() {
		groups = append(groups, g.Name)
	}
	if strings.Join(groups, " ") != "websites pages budgets multistep lab field rum events web" {
		t.Errorf("groups %v: the functions under functions/ are websites, pages, budgets, multistep, lab, field, rum, events and web", groups)
	}
	if !slices.Contains(groups, table.DefaultGroup) {
		t.Errorf("default group %q is not a group", table.DefaultGroup)
	}
}

// examplePath turns a pattern into a path it matches.
func examplePath(pattern string) string {
	p := wildcard.ReplaceAllString(pattern, "x0")
	switch {
	case strings.HasPrefix(pattern, "/rum/"):
		p = "/rum/x0.js"
	case pattern == "/app/{file...}":
		p = "/app/" // the dashboard's page
	}
	return p
}

// TestGroups serves each group on its own, as its Lambda function does: it answers its own
// routes (401 without a key, or the public answer) and only those (404 or 405 for every other
// group's). No request reaches the store.
func TestGroups(t *testing.T) {
	srv := api.New(api.Deps{Log: awstest.Log(t)})
	table := routeTable(t)
	for _, group := range api.Groups() {
		g, h := group.Name, srv.Serve(group)
		for _, rt := range table.Routes {
			if rt.Group == g && (rt.Pattern == "/rum/{file}" || rt.Pattern == "/{websiteID}/lighthouse-report") {
				continue // the snippet looks the website up in the store, a report its link
			}
			req := httptest.NewRequest(rt.Method, examplePath(rt.Pattern), nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch {
			case rt.Group != g:
				if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
					t.Errorf("group %s answers %s %s of group %s with %d", g, rt.Method, rt.Pattern, rt.Group, rec.Code)
				}
			case rt.Access != "public":
				if rec.Code != http.StatusUnauthorized {
					t.Errorf("group %s answers %s %s without a key with %d, want 401", g, rt.Method, rt.Pattern, rec.Code)
				}
			case rec.Code == http.StatusNotFound || rec.Code == http.StatusMethodNotAllowed:
				t.Errorf("group %s does not serve its public %s %s: %d", g, rt.Method, rt.Pattern, rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); rec.Code >= 400 && ct != "application/problem+json" {
				t.Errorf("group %s, %s %s: %d as %q, want problem+json", g, rt.Method, rt.Pattern, rec.Code, ct)
			}
		}
	}
}
