package api_test

import (
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/testing/apitest"
)

// TestRequestNumbersHaveRanges: every number a request carries, in a body or a query, has a
// range in the OpenAPI document (minimum and maximum), and the ranges the code declares are the
// document's.
func TestRequestNumbersHaveRanges(t *testing.T) {
	doc, err := loadYAML()
	if err != nil {
		t.Fatal(err)
	}
	walk := func(where string, ref *openapi3.SchemaRef) {
		eachSchema(where, ref, func(where string, s *openapi3.Schema) {
			if isNumber(s) && (s.Min == nil || s.Max == nil) {
				t.Errorf("%s: a number without a range (minimum and maximum)", where)
			}
		})
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for _, p := range append(item.Parameters, op.Parameters...) {
				walk(method+" "+path+" ?"+p.Value.Name, p.Value.Schema)
			}
			if op.RequestBody != nil {
				for ct, media := range op.RequestBody.Value.Content {
					walk(method+" "+path+" ("+ct+")", media.Schema)
				}
			}
		}
	}

	threshold := doc.Components.Schemas["Threshold"].Value.Properties
	for name, want := range map[string][2]float64{"relative": {0, regression.MaxRelative}, "absolute": {0, regression.MaxAbsolute}} {
		if p := threshold[name].Value; p.Min == nil || p.Max == nil || *p.Min != want[0] || *p.Max != want[1] {
			t.Errorf("Threshold.%s's range in openapi.yaml is not %v, the one regression declares", name, want)
		}
	}
}

// TestNumberRanges: a number outside its field's range, too large for a float, or so small it is
// subnormal, is refused with a 422 naming the field, and changes nothing.
func TestNumberRanges(t *testing.T) {
	e := newTestEnv(t)
	f := newRouteFixture(t, e)
	w := "/" + f.values["websiteID"]
	e.do("PUT", w+"/regression-thresholds", apitest.AdminKey, `{"lcp":{"relative":0.2,"absolute":250}}`).Want(t, 200)
	before := string(e.do("GET", w+"/regression-thresholds", apitest.ViewerKey, nil).Want(t, 200).Body)

	for _, tc := range []struct {
		method, path, body, field string
	}{
		// The probe's body: subnormal relative, negative zero absolute.
		{"PUT", w + "/regression-thresholds", `{"lcp":{"relative":1e-320,"absolute":-0.0}}`, "lcp.relative"},
		{"PUT", w + "/regression-thresholds", `{"lcp":{"relative":0.1,"absolute":1e-131}}`, "lcp.absolute"},
		{"PUT", w + "/regression-thresholds", `{"lcp":{"relative":10.5}}`, "lcp.relative"},
		{"PUT", w + "/regression-thresholds", `{"lcp":{"relative":-0.1}}`, "lcp.relative"},
		{"PUT", w + "/regression-thresholds", `{"lcp":{"absolute":1e10}}`, "lcp.absolute"},
		{"PUT", w + "/regression-thresholds", `{"lcp":{"absolute":1e400}}`, "lcp.absolute"},
		{"PUT", w + "/regression-thresholds", `{"cls":{"relative":0,"absolute":0}}`, "cls"},
		{"POST", w + "/budgets", `{"metric":"lcp","operator":"lt","value":1e-320,"device":"all"}`, "value"},
		{"POST", w + "/budgets", `{"metric":"lcp","operator":"lt","value":1e400,"device":"all"}`, "value"},
		{"PUT", w + "/budgets/" + f.values["budgetID"], `{"value":-1}`, "value"},
		{"POST", w + "/multistep", `{"alias":"n","device":"mobile","steps":[{"type":"type","target":"#q","value":1e-320}]}`, "steps[0].value"},
		{"POST", w + "/multistep", `{"alias":"n","device":"mobile","steps":[{"type":"type","target":"#q","value":1.5}]}`, "steps[0].value"},
		{"POST", w + "/multistep", `{"alias":"n","device":"mobile","steps":[{"type":"type","target":"#q","value":-4}]}`, "steps[0].value"},
		{"POST", w + "/multistep", `{"alias":"n","device":"mobile","steps":[{"type":"navigate","target":"/"},{"type":"type","target":"#q","value":1e16}]}`, "steps[1].value"},
	} {
		e.do(tc.method, tc.path, apitest.AdminKey, tc.body).Want(t, 422).Problem(t, tc.field)
	}
	// An unknown metric is an unknown field.
	e.do("PUT", w+"/regression-thresholds", apitest.AdminKey, `{"fid":{"absolute":1}}`).Want(t, 400).Problem(t, "fid")

	if after := string(e.do("GET", w+"/regression-thresholds", apitest.ViewerKey, nil).Want(t, 200).Body); after != before {
		t.Errorf("refused thresholds changed them: %s, then %s", before, after)
	}
	if n := len(apitest.List[multistepTest](t, e.do("GET", w+"/multistep", apitest.ViewerKey, nil).Want(t, 200))); n != 1 {
		t.Errorf("%d multistep tests after refused ones, want 1", n)
	}

	// In range: the smallest non-zero parts, the largest, and whole numbers written as such.
	e.do("PUT", w+"/regression-thresholds", apitest.AdminKey, `{"lcp":{"relative":0.000001,"absolute":-0.0},"kb_total":{"relative":10,"absolute":1e9}}`).Want(t, 200)
	var ms multistepTest
	e.do("POST", w+"/multistep", apitest.AdminKey, `{"alias":"n","device":"mobile","steps":[{"type":"navigate","target":"/"},{"type":"wait","value":1e3},{"type":"type","target":"#zip","value":90210.0}]}`).
		Want(t, 201).Decode(t, &ms)
	if ms.Steps[1].Value != "1000" || ms.Steps[2].Value != "90210" {
		t.Errorf("steps %+v: a number value is kept as its digits", ms.Steps)
	}
}
