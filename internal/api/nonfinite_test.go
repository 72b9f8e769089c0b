package api_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// nonFiniteQueryValues are what a client may send for a number that is none: strconv.ParseFloat
// reads NaN and Inf in any case and with a sign, and 1e309 as +Inf (with ErrRange).
var nonFiniteQueryValues = []string{"NaN", "nan", "Inf", "-Inf", "+Inf", "1e309"}

// isNumber tells whether a schema is a number or an integer (alone or among other types).
func isNumber(s *openapi3.Schema) bool {
	return s != nil && s.Type != nil && (s.Type.Includes("number") || s.Type.Includes("integer"))
}

// operationRoutes are the route table's routes by method and pattern, wildcards as {}, to
// match the OpenAPI document's paths to them.
func operationRoutes(t *testing.T) map[string]walkRoute {
	routes := map[string]walkRoute{}
	for _, rt := range tableRoutes(t) {
		routes[rt.Method+" "+wildcard.ReplaceAllString(rt.Pattern, "{}")] = rt
	}
	return routes
}

// operationsFixture is what a walk over the document's operations sends its requests with:
// the document, a test env with the route fixture's website and page, and the route table by
// operation.
func operationsFixture(t *testing.T) (*openapi3.T, *testEnv, routeFixture, map[string]walkRoute) {
	t.Helper()
	doc, err := loadYAML()
	if err != nil {
		t.Fatal(err)
	}
	e := newTestEnv(t)
	return doc, e, newRouteFixture(t, e), operationRoutes(t)
}

// operationTarget is where an operation of the document is sent: its route's path on the
// fixture's website and page, with the key its access needs; false (said) when no route of the
// table serves it.
func operationTarget(t *testing.T, routes map[string]walkRoute, f routeFixture, method, path string) (walkRoute, string, string, bool) {
	t.Helper()
	rt, ok := routes[method+" "+wildcard.ReplaceAllString(path, "{}")]
	if !ok {
		t.Errorf("%s %s is not a route of the route table", method, path)
		return rt, "", "", false
	}
	key := apitest.AdminKey
	if rt.Access == "public" {
		key = ""
	}
	return rt, f.path(t, rt.Pattern, nil), key, true
}

// TestNonFiniteQueryNumbers walks every operation of the OpenAPI document and sends each number
// or integer query parameter each of nonFiniteQueryValues, the operation's other required
// parameters valid, with an admin key, to a real website and page: each is a 400 problem naming
// the parameter, never a 500. A value in the parameter's range is answered 200 first, so that
// the 400 is the value's doing.
func TestNonFiniteQueryNumbers(t *testing.T) {
	doc, e, f, routes := operationsFixture(t)

	covered := map[string]bool{} // "METHOD path ?name"
	for _, path := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
		item := doc.Paths.Value(path)
		ops := item.Operations()
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			var numeric, others []*openapi3.Parameter
			for _, ref := range append(slices.Clone(item.Parameters), ops[method].Parameters...) {
				if p := ref.Value; p.In == openapi3.ParameterInQuery && isNumber(p.Schema.Value) {
					numeric = append(numeric, p)
				} else if p.In == openapi3.ParameterInQuery && p.Required {
					others = append(others, p)
				}
			}
			if len(numeric) == 0 {
				continue
			}
			required := url.Values{}
			for _, p := range others {
				required.Set(p.Name, validQueryValue(t, method+" "+path, p))
			}
			rt, target, key, ok := operationTarget(t, routes, f, method, path)
			if !ok {
				continue
			}
			send := func(name, value string) response {
				t.Helper()
				q := maps.Clone(required)
				q.Set(name, value)
				res := e.do(rt.Method, target+"?"+q.Encode(), key, nil)
				if res.Status >= 500 {
					t.Errorf("%s %s?%s: %d %s", method, path, q.Encode(), res.Status, res.Body)
				}
				return res
			}
			for _, p := range numeric {
				what := method + " " + path + " ?" + p.Name
				covered[what] = true
				s := p.Schema.Value
				if s.Min == nil {
					t.Errorf("%s: no minimum, so no value in range to try", what)
					continue
				}
				if res := send(p.Name, fmt.Sprint(*s.Min)); res.Status != http.StatusOK {
					t.Errorf("%s=%v (in range): %d %s, want 200", what, *s.Min, res.Status, res.Body)
					continue
				}
				for _, v := range nonFiniteQueryValues {
					res := send(p.Name, v)
					if res.Status != http.StatusBadRequest {
						t.Errorf("%s=%s: %d %s, want 400", what, v, res.Status, res.Body)
						continue
					}
					if ct := res.Header.Get("Content-Type"); ct != "application/problem+json" {
						t.Errorf("%s=%s: Content-Type %q, want application/problem+json", what, v, ct)
					}
					if prob := res.Problem(t, p.Name); len(prob.Errors) == 0 {
						t.Errorf("%s=%s: a problem without errors[]: %s", what, v, res.Body)
					}
				}
			}
		}
	}
	if len(covered) == 0 {
		t.Fatal("the OpenAPI document has no number or integer query parameter: the walk covered nothing")
	}
	for _, what := range slices.Sorted(maps.Keys(covered)) {
		t.Log("covered", what)
	}
}

// validQueryValue is a valid value of a required query parameter that is not a number: its
// enum's first value or its example.
func validQueryValue(t *testing.T, op string, p *openapi3.Parameter) string {
	t.Helper()
	switch s := p.Schema.Value; {
	case len(s.Enum) > 0:
		return fmt.Sprint(s.Enum[0])
	case p.Example != nil:
		return fmt.Sprint(p.Example)
	case s.Example != nil:
		return fmt.Sprint(s.Example)
	}
	t.Fatalf("%s: no valid value known for the required query parameter %s: give it an enum or an example", op, p.Name)
	return ""
}

// bodyNumberCase is a request body valid but for one number field, whose value is $N ($W the
// website's ID), and the answer to a number that field cannot hold (1e309): its status and the
// field errors[] names ("" for none).
type bodyNumberCase struct {
	body   string
	status int
	field  string
}

// bodyNumberCases has one case for each number field of a request body in the OpenAPI document,
// keyed "METHOD path field" (field as numberFields writes it). A number a field cannot hold is
// a 422 naming the field, as docs/api.md says of every number out of its field's range; a
// beacon's (POST /collect) is dropped as the document says of every value that is not finite,
// the view still counted (202), or refused as having no metric (422 naming m) when it was the
// only metric.
var bodyNumberCases = map[string]bodyNumberCase{
	"POST /{websiteId}/budgets value":           {`{"metric":"lcp","operator":"lt","value":$N,"device":"all"}`, 422, "value"},
	"PUT /{websiteId}/budgets/{budgetId} value": {`{"value":$N}`, 422, "value"},
	"POST /{websiteId}/experiments changes.delay[].ms": {`{"page":"$P","device":"mobile","changes":{"delay":[{"pattern":"*://cdn.example.net/*","ms":$N}]}}`,
		422, "changes.delay.ms"},
	"POST /{websiteId}/multistep steps[].value": {`{"alias":"n","device":"mobile","steps":[{"type":"navigate","target":"/"},{"type":"wait","value":$N}]}`,
		422, "steps[1].value"},
	"PUT /{websiteId}/multistep/{testId} steps[].value": {`{"steps":[{"type":"navigate","target":"/"},{"type":"wait","value":$N}]}`,
		422, "steps[1].value"},
	"POST /{websiteId}/profiles login[].value": {`{"name":"n","login":[{"type":"navigate","target":"/login"},{"type":"type","target":"#pin","value":$N}]}`,
		422, "login[1].value"},
	"POST /{websiteId}/profiles network.cpuSlowdown":    {`{"name":"n","network":{"preset":"custom","cpuSlowdown":$N}}`, 422, "network.cpuSlowdown"},
	"POST /{websiteId}/profiles network.rttMs":          {`{"name":"n","network":{"preset":"custom","rttMs":$N}}`, 422, "network.rttMs"},
	"POST /{websiteId}/profiles network.throughputKbps": {`{"name":"n","network":{"preset":"custom","throughputKbps":$N}}`, 422, "network.throughputKbps"},
	"POST /{websiteId}/profiles viewport.height":        {`{"name":"n","viewport":{"width":800,"height":$N}}`, 422, "viewport.height"},
	"POST /{websiteId}/profiles viewport.width":         {`{"name":"n","viewport":{"width":$N,"height":600}}`, 422, "viewport.width"},
	"PUT /{websiteId}/profiles/{profileId} login[].value": {`{"login":[{"type":"navigate","target":"/login"},{"type":"type","target":"#pin","value":$N}]}`,
		422, "login[1].value"},
	"PUT /{websiteId}/profiles/{profileId} network.cpuSlowdown":    {`{"network":{"preset":"custom","cpuSlowdown":$N}}`, 422, "network.cpuSlowdown"},
	"PUT /{websiteId}/profiles/{profileId} network.rttMs":          {`{"network":{"preset":"custom","rttMs":$N}}`, 422, "network.rttMs"},
	"PUT /{websiteId}/profiles/{profileId} network.throughputKbps": {`{"network":{"preset":"custom","throughputKbps":$N}}`, 422, "network.throughputKbps"},
	"PUT /{websiteId}/profiles/{profileId} viewport.height":        {`{"viewport":{"width":800,"height":$N}}`, 422, "viewport.height"},
	"PUT /{websiteId}/profiles/{profileId} viewport.width":         {`{"viewport":{"width":$N,"height":600}}`, 422, "viewport.width"},
	"PUT /{websiteId}/field-testing/settings groups[].id":          {`{"groups":[{"id":$N,"name":"Products","pattern":"/p/*"}]}`, 422, "groups.id"},
	"PUT /{websiteId}/field-testing/settings sampleRate":           {`{"sampleRate":$N}`, 422, "sampleRate"},
	"PUT /{websiteId}/data-settings retention.reports":             {`{"retention":{"reports":$N}}`, 422, "retention.reports"},
	"PUT /{websiteId}/data-settings retention.series":              {`{"retention":{"series":$N}}`, 422, "retention.series"},
	"PUT /{websiteId}/data-settings retention.rum":                 {`{"retention":{"rum":$N}}`, 422, "retention.rum"},
	"PUT /{websiteId}/data-settings retention.events":              {`{"retention":{"events":$N}}`, 422, "retention.events"},
	"PUT /{websiteId}/data-settings retention.exports":             {`{"retention":{"exports":$N}}`, 422, "retention.exports"},
	"PUT /{websiteId}/regression-thresholds {}.absolute":           {`{"lcp":{"absolute":$N}}`, 422, "lcp.absolute"},
	"PUT /{websiteId}/regression-thresholds {}.relative":           {`{"lcp":{"relative":$N}}`, 422, "lcp.relative"},
	"POST /collect m{}":         {`{"w":"$W","u":"https://example.com/","m":{"lcp":$N}}`, 422, "m"},
	"POST /collect c{}":         {`{"w":"$W","u":"https://example.com/","m":{"lcp":1200},"c":{"cart":$N}}`, 202, ""},
	"POST /collect s.t":         {`{"w":"$W","u":"https://example.com/","m":{"lcp":1200},"s":{"t":$N}}`, 202, ""},
	"POST /collect s.d":         {`{"w":"$W","u":"https://example.com/","m":{"lcp":1200},"s":{"d":$N}}`, 202, ""},
	"POST /collect a.lcp.p[]":   {`{"w":"$W","u":"https://example.com/","m":{"lcp":1200},"a":{"lcp":{"e":"img","p":[1,2,3,$N]}}}`, 202, ""},
	"POST /collect a.inp.p[]":   {`{"w":"$W","u":"https://example.com/","m":{"inp":120},"a":{"inp":{"e":"button","p":[1,2,$N]}}}`, 202, ""},
	"POST /collect a.inp.s[].d": {`{"w":"$W","u":"https://example.com/","m":{"inp":120},"a":{"inp":{"e":"button","s":[{"u":"https://example.com/a.js","d":$N}]}}}`, 202, ""},
	"POST /collect a.cls.t":     {`{"w":"$W","u":"https://example.com/","m":{"cls":0.2},"a":{"cls":{"e":"div","t":$N}}}`, 202, ""},
	// A lifecycle's views (the snippet with soft navigations).
	"POST /collect v[].m{}":         {`{"w":"$W","v":[{"u":"https://example.com/","m":{"lcp":$N}}]}`, 422, "m"},
	"POST /collect v[].s.t":         {`{"w":"$W","v":[{"u":"https://example.com/","m":{"lcp":1200},"s":{"t":$N}}]}`, 202, ""},
	"POST /collect v[].s.d":         {`{"w":"$W","v":[{"u":"https://example.com/","m":{"lcp":1200},"s":{"d":$N}}]}`, 202, ""},
	"POST /collect v[].a.lcp.p[]":   {`{"w":"$W","v":[{"u":"https://example.com/","m":{"lcp":1200},"a":{"lcp":{"e":"img","p":[1,2,3,$N]}}}]}`, 202, ""},
	"POST /collect v[].a.inp.p[]":   {`{"w":"$W","v":[{"u":"https://example.com/","m":{"inp":120},"a":{"inp":{"e":"button","p":[1,2,$N]}}}]}`, 202, ""},
	"POST /collect v[].a.inp.s[].d": {`{"w":"$W","v":[{"u":"https://example.com/","m":{"inp":120},"a":{"inp":{"e":"button","s":[{"u":"https://example.com/a.js","d":$N}]}}}]}`, 202, ""},
	"POST /collect v[].a.cls.t":     {`{"w":"$W","v":[{"u":"https://example.com/","m":{"cls":0.2},"a":{"cls":{"e":"div","t":$N}}}]}`, 202, ""},
}

// numberFields lists the number fields of a JSON request body schema: "value",
// "network.rttMs", "steps[].value", "m{}" (a map's values), "{}.absolute".
func numberFields(ref *openapi3.SchemaRef) []string {
	var out []string
	eachSchema("", ref, func(where string, s *openapi3.Schema) {
		if isNumber(s) {
			out = append(out, where)
		}
	})
	return out
}

// eachSchema calls visit with every schema inside ref and where it sits below where: a
// property "a.b", an item "a[]", a map's values "a{}"; the alternatives of oneOf, anyOf and
// allOf sit where their schema does. A schema inside itself is visited once on that path; the
// same schema at two places of one document is visited at each.
func eachSchema(where string, ref *openapi3.SchemaRef, visit func(where string, s *openapi3.Schema)) {
	seen := map[*openapi3.Schema]bool{}
	var walk func(where string, ref *openapi3.SchemaRef)
	walk = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		defer delete(seen, s)
		visit(where, s)
		for name, p := range s.Properties {
			if where == "" {
				walk(name, p)
			} else {
				walk(where+"."+name, p)
			}
		}
		walk(where+"[]", s.Items)
		walk(where+"{}", s.AdditionalProperties.Schema)
		for _, group := range []openapi3.SchemaRefs{s.OneOf, s.AnyOf, s.AllOf} {
			for _, alt := range group {
				walk(where, alt)
			}
		}
	}
	walk(where, ref)
}

// TestNonFiniteBodyNumbers sends 1e309 and -1e309, numbers no float64 holds, in every number
// field of every JSON request body of the OpenAPI document: each is answered as bodyNumberCases
// says (a 422 naming the field, the beacon's own rules for /collect), never a 500. NaN and
// Infinity are not JSON: a 400.
func TestNonFiniteBodyNumbers(t *testing.T) {
	doc, e, f, routes := operationsFixture(t)
	replacer := func(n string) *strings.Replacer {
		return strings.NewReplacer("$N", n, "$W", f.values["websiteID"], "$P", f.values["pageID"])
	}

	found := map[string]bool{}
	for _, path := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
		item := doc.Paths.Value(path)
		ops := item.Operations()
		for _, method := range slices.Sorted(maps.Keys(ops)) {
			op := ops[method]
			if op.RequestBody == nil || op.RequestBody.Value.Content["application/json"] == nil {
				continue
			}
			for _, field := range numberFields(op.RequestBody.Value.Content["application/json"].Schema) {
				what := method + " " + path + " " + field
				found[what] = true
				tc, ok := bodyNumberCases[what]
				if !ok {
					t.Errorf("%s: a number field of a request body without a case in bodyNumberCases: add one", what)
					continue
				}
				rt, target, key, ok := operationTarget(t, routes, f, method, path)
				if !ok {
					continue
				}
				for _, n := range []string{"1e309", "-1e309", "NaN", "Infinity"} {
					body := replacer(n).Replace(tc.body)
					res := e.do(rt.Method, target, key, body)
					want, field := tc.status, tc.field
					if n == "NaN" || n == "Infinity" {
						want, field = http.StatusBadRequest, ""
					}
					if res.Status != want {
						t.Errorf("%s = %s: %d %s, want %d", what, n, res.Status, res.Body, want)
						continue
					}
					if res.Status >= 400 {
						if field != "" {
							res.Problem(t, field)
						} else {
							res.Problem(t)
						}
					}
				}
			}
		}
	}
	if len(found) == 0 {
		t.Fatal("the OpenAPI document has no number field in a request body: the walk covered nothing")
	}
	for what := range bodyNumberCases {
		if !found[what] {
			t.Errorf("bodyNumberCases has %q, which is no number field of the OpenAPI document", what)
		}
	}
}
