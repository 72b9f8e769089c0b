package api_test

import (
	"github.com/openvitals/openvitals/internal/testing/apitest"

	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

type step struct {
	Type              string `json:"type"`
	Target            string `json:"target,omitempty"`
	Value             string `json:"value,omitempty"`
	WaitForNavigation bool   `json:"waitForNavigation"`
	WaitUntil         string `json:"waitUntil,omitempty"`
}

type multistepTest struct {
	ID      string    `json:"id"`
	Alias   string    `json:"alias"`
	Created time.Time `json:"created"`
	Device  string    `json:"device"`
	Steps   []step    `json:"steps"`
}

func TestMultistep(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	path := "/" + site.ID + "/multistep"

	var plain multistepTest
	before := time.Now().Add(-time.Second)
	e.do("POST", path, apitest.AdminKey, `{"alias":"Checkout","device":"mobile","steps":[{"type":"navigate","target":"/checkout"}]}`).Want(t, 201).Decode(t, &plain)
	if plain.ID == "" || plain.Alias != "Checkout" || plain.Device != "mobile" || len(plain.Steps) != 1 || plain.Steps[0].Target != "/checkout" ||
		plain.Created.Before(before) || plain.Created.After(time.Now().Add(time.Second)) {
		t.Errorf("created %+v", plain)
	}

	var journey multistepTest
	e.do("POST", path, apitest.AdminKey, `{"alias":"Search","device":"desktop","steps":[
		{"type":"navigate","target":"/"},
		{"type":"type","target":"#q","value":"shoes"},
		{"type":"click","target":"button[type=submit]","waitForNavigation":"on","waitUntil":"networkidle2"},
		{"type":"wait","value":500},
		{"type":"scroll"},
		{"type":"hover","target":".menu","waitForNavigation":false},
		{"type":"select","target":"select#size","value":"42"},
		{"type":"waitForSelector","target":".results"},
		{"type":"click","target":"a.next","waitForNavigation":true},
		{"type":"navigate","target":"https://example.com/cart","waitUntil":"domcontentloaded"}
	]}`).Want(t, 201).Decode(t, &journey)
	wantSteps := []step{
		{Type: "navigate", Target: "/", WaitUntil: "load"},
		{Type: "type", Target: "#q", Value: "shoes"},
		{Type: "click", Target: "button[type=submit]", WaitForNavigation: true, WaitUntil: "networkidle2"},
		{Type: "wait", Value: "500"},
		{Type: "scroll"},
		{Type: "hover", Target: ".menu"},
		{Type: "select", Target: "select#size", Value: "42"},
		{Type: "waitForSelector", Target: ".results"},
		{Type: "click", Target: "a.next", WaitForNavigation: true, WaitUntil: "load"},
		{Type: "navigate", Target: "https://example.com/cart", WaitUntil: "domcontentloaded"},
	}
	if fmt.Sprint(journey.Steps) != fmt.Sprint(wantSteps) {
		t.Errorf("steps\n got %+v\nwant %+v", journey.Steps, wantSteps)
	}

	// One test, as stored.
	var one multistepTest
	e.do("GET", path+"/"+journey.ID, apitest.ViewerKey, nil).Want(t, 200).Decode(t, &one)
	if fmt.Sprint(one) != fmt.Sprint(journey) {
		t.Errorf("get %+v, want %+v", one, journey)
	}

	// The list carries the 14-day statistics: none yet, so averages are null and the test is off.
	res := e.do("GET", path, apitest.ViewerKey, nil).Want(t, 200)
	var raw struct {
		Result struct {
			List []map[string]json.RawMessage `json:"list"`
		} `json:"result"`
	}
	res.Decode(t, &raw)
	if len(raw.Result.List) != 2 {
		t.Fatalf("list has %d tests", len(raw.Result.List))
	}
	for _, item := range raw.Result.List {
		for k, v := range map[string]string{"inp": "null", "tbt": "null", "cls": "null", "duration": "null",
			"success_rate": "null", "success_rates": "[]", "state": `"off"`} {
			if string(item[k]) != v {
				t.Errorf("list item %s = %s, want %s", k, item[k], v)
			}
		}
	}
	if list := apitest.List[multistepTest](t, res); list[0].ID != plain.ID || len(list[1].Steps) != 10 {
		t.Errorf("list order or steps wrong: %+v", list)
	}

	// Edit replaces what is sent and keeps the rest.
	var edited multistepTest
	e.do("PUT", path+"/"+journey.ID, apitest.AdminKey, `{"alias":"Search v2","steps":[{"type":"navigate","target":"/search"}]}`).Want(t, 200).Decode(t, &edited)
	if edited.Alias != "Search v2" || edited.Device != "desktop" || len(edited.Steps) != 1 || !edited.Created.Equal(journey.Created) {
		t.Errorf("edited %+v", edited)
	}
	e.do("PUT", path+"/"+journey.ID, apitest.AdminKey, `{"device":"mobile"}`).Want(t, 200).Decode(t, &edited)
	if edited.Device != "mobile" || len(edited.Steps) != 1 {
		t.Errorf("edited %+v", edited)
	}

	e.do("POST", path, apitest.ViewerKey, `{"alias":"x","device":"mobile"}`).Want(t, 403)
	e.do("PUT", path+"/"+journey.ID, apitest.ViewerKey, `{"alias":"x"}`).Want(t, 403)
	e.do("DELETE", path+"/"+journey.ID, apitest.ViewerKey, nil).Want(t, 403)

	e.deleted(t, path+"/"+journey.ID)
	e.do("GET", path+"/"+journey.ID, apitest.AdminKey, nil).Want(t, 404).Problem(t)
	e.do("PUT", path+"/"+journey.ID, apitest.AdminKey, `{"alias":"x"}`).Want(t, 404)
	if list := apitest.List[multistepTest](t, e.do("GET", path, apitest.AdminKey, nil)); len(list) != 1 || list[0].ID != plain.ID {
		t.Errorf("after delete, list %+v", list)
	}
}

func TestMultistepValidation(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	path := "/" + site.ID + "/multistep"
	var existing multistepTest
	e.do("POST", path, apitest.AdminKey, `{"alias":"Keep","device":"desktop","steps":[{"type":"navigate","target":"/"}]}`).Want(t, 201).Decode(t, &existing)

	steps := func(s string) string { return `{"alias":"t","device":"desktop","steps":[` + s + `]}` }
	tooMany := strings.TrimSuffix(strings.Repeat(`{"type":"scroll"},`, 51), ",")
	for _, tc := range []struct {
		name, body string
		status     int
		fields     []string
	}{
		{"missing alias and device", `{}`, 422, []string{"alias", "device"}},
		{"device", `{"alias":"t","device":"tablet"}`, 422, []string{"device"}},
		{"blank alias", `{"alias":"  ","device":"mobile"}`, 422, []string{"alias"}},
		{"51 steps", steps(tooMany), 422, []string{"steps"}},
		// A test without a step would "complete" every run in 0 ms with a 100 % success rate.
		{"no steps", `{"alias":"t","device":"desktop"}`, 422, []string{"steps"}},
		{"empty steps", steps(``), 422, []string{"steps"}},
		{"unknown type", steps(`{"type":"drag","target":"#a"}`), 422, []string{"steps[0].type"}},
		{"missing type", steps(`{"target":"#a"}`), 422, []string{"steps[0].type"}},
		{"click without target", steps(`{"type":"click"}`), 422, []string{"steps[0].target"}},
		{"navigate without target", steps(`{"type":"navigate"}`), 422, []string{"steps[0].target"}},
		{"navigate javascript", steps(`{"type":"navigate","target":"javascript:alert(1)"}`), 422, []string{"steps[0].target"}},
		{"navigate file", steps(`{"type":"navigate","target":"file:///etc/passwd"}`), 422, []string{"steps[0].target"}},
		{"type without value", steps(`{"type":"type","target":"#q"}`), 422, []string{"steps[0].value"}},
		{"select without value", steps(`{"type":"select","target":"#s"}`), 422, []string{"steps[0].value"}},
		{"wait without value", steps(`{"type":"wait"}`), 422, []string{"steps[0].value"}},
		{"wait not a number", steps(`{"type":"wait","value":"soon"}`), 422, []string{"steps[0].value"}},
		{"wait too long", steps(`{"type":"wait","value":600000}`), 422, []string{"steps[0].value"}},
		{"wait with target", steps(`{"type":"wait","value":5,"target":"#a"}`), 422, []string{"steps[0].target"}},
		{"value on click", steps(`{"type":"click","target":"#a","value":"x"}`), 422, []string{"steps[0].value"}},
		{"waitUntil", steps(`{"type":"click","target":"#a","waitForNavigation":true,"waitUntil":"idle"}`), 422, []string{"steps[0].waitUntil"}},
		{"second step bad", steps(`{"type":"scroll"},{"type":"hover"}`), 422, []string{"steps[1].target"}},
		{"waitForNavigation yes", steps(`{"type":"click","target":"#a","waitForNavigation":"yes"}`), 400, []string{"steps.waitForNavigation"}},
		{"waitForNavigation number", steps(`{"type":"click","target":"#a","waitForNavigation":1}`), 400, []string{"steps.waitForNavigation"}},
		{"value object", steps(`{"type":"type","target":"#a","value":{}}`), 400, []string{"steps.value"}},
		{"steps not array", `{"alias":"t","device":"desktop","steps":"navigate"}`, 400, []string{"steps"}},
		{"unknown step field", steps(`{"type":"scroll","delay":5}`), 400, []string{"delay"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.do("POST", path, apitest.AdminKey, tc.body).Want(t, tc.status).Problem(t, tc.fields...)
			// The same body as an edit changes nothing either.
			if tc.status == 422 && tc.name != "missing alias and device" && tc.name != "no steps" {
				e.do("PUT", path+"/"+existing.ID, apitest.AdminKey, tc.body).Want(t, tc.status)
			}
		})
	}
	e.do("PUT", path+"/"+existing.ID, apitest.AdminKey, `{}`).Want(t, 422).Problem(t, "body")
	p := e.do("PUT", path+"/"+existing.ID, apitest.AdminKey, `{"steps":[]}`).Want(t, 422).Problem(t, "steps")
	if len(p.Errors) != 1 || p.Errors[0].Message != "at least one step" {
		t.Errorf("empty steps: %+v", p.Errors)
	}
	list := apitest.List[multistepTest](t, e.do("GET", path, apitest.AdminKey, nil))
	if len(list) != 1 || fmt.Sprint(list[0]) != fmt.Sprint(existing) {
		t.Errorf("refused requests changed the tests: %+v", list)
	}
}
