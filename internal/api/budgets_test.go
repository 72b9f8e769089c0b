package api_test

import (
	"github.com/openvitals/openvitals/internal/testing/apitest"

	"strings"
	"testing"
)

type budget struct {
	ID       string  `json:"id"`
	Metric   string  `json:"metric"`
	Operator string  `json:"operator"`
	Value    float64 `json:"value"`
	Device   string  `json:"device"`
}

type budgetStatus struct {
	ID       string `json:"id"`
	Metric   string `json:"metric"`
	Operator string `json:"operator"`
	Value    string `json:"value"`
	Device   string `json:"device"`
	Status   string `json:"status"`
	Pages    []struct {
		ID, Device, Alias, Status string
	} `json:"pages"`
}

func TestBudgets(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	path := "/" + site.ID + "/budgets"

	var lcp, cls budget
	e.do("POST", path, apitest.AdminKey, `{"metric":"lcp","operator":"lt","value":2500,"device":"all"}`).Want(t, 201).Decode(t, &lcp)
	if lcp.ID == "" || lcp != (budget{ID: lcp.ID, Metric: "lcp", Operator: "lt", Value: 2500, Device: "all"}) {
		t.Errorf("created %+v", lcp)
	}
	e.do("POST", path, apitest.AdminKey, `{"metric":"cls","operator":"lt","value":0.1,"device":"mobile"}`).Want(t, 201).Decode(t, &cls)

	// The list returns value as a numeric string, with status and pages.
	got := apitest.List[budgetStatus](t, e.do("GET", path, apitest.ViewerKey, nil).Want(t, 200))
	if len(got) != 2 || got[0].ID != lcp.ID || got[0].Value != "2500" || got[1].Value != "0.1" {
		t.Fatalf("list %+v", got)
	}
	for _, b := range got {
		if b.Status != "ok" || b.Pages == nil || len(b.Pages) != 0 {
			t.Errorf("budget %+v: without lab results it is ok with empty pages", b)
		}
	}

	// Edit replaces the fields sent and returns the budget with value as a number.
	var edited budget
	e.do("PUT", path+"/"+lcp.ID, apitest.AdminKey, `{"value":2000.5,"device":"desktop"}`).Want(t, 200).Decode(t, &edited)
	if edited != (budget{ID: lcp.ID, Metric: "lcp", Operator: "lt", Value: 2000.5, Device: "desktop"}) {
		t.Errorf("edited %+v", edited)
	}
	e.do("PUT", path+"/"+lcp.ID, apitest.AdminKey, `{"metric":"dom_elements","operator":"gt","value":1500,"device":"all"}`).Want(t, 200)
	got = apitest.List[budgetStatus](t, e.do("GET", path, apitest.AdminKey, nil))
	if got[0].Metric != "dom_elements" || got[0].Operator != "gt" || got[0].Value != "1500" || got[0].Device != "all" {
		t.Errorf("after edit, list has %+v", got[0])
	}

	// Admin only, except reading.
	e.do("POST", path, apitest.ViewerKey, `{"metric":"lcp","operator":"lt","value":1,"device":"all"}`).Want(t, 403)
	e.do("PUT", path+"/"+lcp.ID, apitest.ViewerKey, `{"value":1}`).Want(t, 403)
	e.do("DELETE", path+"/"+lcp.ID, apitest.ViewerKey, nil).Want(t, 403)

	e.do("PUT", path+"/nosuchbudget", apitest.AdminKey, `{"value":1}`).Want(t, 404).Problem(t)
	e.deleted(t, path+"/"+cls.ID)
	e.do("PUT", path+"/"+cls.ID, apitest.AdminKey, `{"value":1}`).Want(t, 404)
	if got := apitest.List[budgetStatus](t, e.do("GET", path, apitest.AdminKey, nil)); len(got) != 1 || got[0].ID != lcp.ID {
		t.Errorf("after delete, list %+v", got)
	}
}

func TestBudgetValidation(t *testing.T) {
	e := newTestEnv(t)
	site := e.createWebsite("example.com")
	path := "/" + site.ID + "/budgets"
	var b budget
	e.do("POST", path, apitest.AdminKey, `{"metric":"ux_inp","operator":"gt","value":-0,"device":"all"}`).Want(t, 201).Decode(t, &b)
	for _, tc := range []struct {
		name, method, body string
		status             int
		fields             []string
	}{
		{"unknown metric", "POST", `{"metric":"speed","operator":"lt","value":1,"device":"all"}`, 422, []string{"metric"}},
		{"score field not a metric", "POST", `{"metric":"budgets_exceeded","operator":"lt","value":1,"device":"all"}`, 422, []string{"metric"}},
		{"operator", "POST", `{"metric":"lcp","operator":"le","value":1,"device":"all"}`, 422, []string{"operator"}},
		{"device", "POST", `{"metric":"lcp","operator":"lt","value":1,"device":"tablet"}`, 422, []string{"device"}},
		{"all missing", "POST", `{}`, 422, []string{"metric", "operator", "value", "device"}},
		{"value as string", "POST", `{"metric":"lcp","operator":"lt","value":"2500","device":"all"}`, 400, []string{"value"}},
		{"value too large", "POST", `{"metric":"lcp","operator":"lt","value":1e400,"device":"all"}`, 422, []string{"value"}},
		{"value NaN", "POST", `{"metric":"lcp","operator":"lt","value":NaN,"device":"all"}`, 400, nil},
		{"metric as number", "POST", `{"metric":1,"operator":"lt","value":1,"device":"all"}`, 400, []string{"metric"}},
		{"edit nothing", "PUT", `{}`, 422, []string{"body"}},
		{"edit bad metric", "PUT", `{"metric":"LCP"}`, 422, []string{"metric"}},
		{"edit unknown field", "PUT", `{"status":"ok"}`, 400, []string{"status"}},
		{"edit null body", "PUT", `null`, 400, nil},
		// Numbers beyond a metric's range, some beyond DynamoDB's (which answered 500).
		{"1e126", "POST", `{"metric":"lcp","operator":"lt","value":1e126,"device":"all"}`, 422, []string{"value"}},
		{"1e300", "POST", `{"metric":"lcp","operator":"lt","value":1e300,"device":"all"}`, 422, []string{"value"}},
		{"-1e200", "POST", `{"metric":"lcp","operator":"lt","value":-1e200,"device":"all"}`, 422, []string{"value"}},
		{"1e-131", "POST", `{"metric":"cls","operator":"lt","value":1e-131,"device":"all"}`, 422, []string{"value"}},
		{"negative time", "POST", `{"metric":"lcp","operator":"lt","value":-1,"device":"all"}`, 422, []string{"value"}},
		{"time over a day", "POST", `{"metric":"tbt","operator":"lt","value":86400001,"device":"all"}`, 422, []string{"value"}},
		{"cls over 10", "POST", `{"metric":"cls","operator":"lt","value":10.5,"device":"all"}`, 422, []string{"value"}},
		{"score over 100", "POST", `{"metric":"performance_score","operator":"gt","value":101,"device":"all"}`, 422, []string{"value"}},
		{"negative bytes", "POST", `{"metric":"bytes_js","operator":"lt","value":-5,"device":"all"}`, 422, []string{"value"}},
		{"ux_fid never has data", "POST", `{"metric":"ux_fid","operator":"lt","value":100,"device":"all"}`, 422, []string{"metric"}},
		{"edit 1e126", "PUT", `{"value":1e126}`, 422, []string{"value"}},
		{"edit 1e300", "PUT", `{"value":1e300}`, 422, []string{"value"}},
		{"edit -1e200", "PUT", `{"value":-1e200}`, 422, []string{"value"}},
		{"edit 1e-131", "PUT", `{"value":1e-131}`, 422, []string{"value"}},
		// The stored value (0 on ux_inp) is judged against the new metric's range too.
		{"edit metric to ux_fid", "PUT", `{"metric":"ux_fid"}`, 422, []string{"metric"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := path
			if tc.method == "PUT" {
				p += "/" + b.ID
			}
			e.do(tc.method, p, apitest.AdminKey, tc.body).Want(t, tc.status).Problem(t, tc.fields...)
		})
	}
	got := apitest.List[budgetStatus](t, e.do("GET", path, apitest.AdminKey, nil))
	if len(got) != 1 || got[0].Metric != "ux_inp" || got[0].Operator != "gt" || got[0].Value != "0" {
		t.Errorf("refused requests changed the budgets: %+v", got)
	}

	// The messages say the range and why ux_fid is refused.
	p := e.do("POST", path, apitest.AdminKey, `{"metric":"cls","operator":"lt","value":11,"device":"all"}`).Want(t, 422).Problem(t, "value")
	if len(p.Errors) != 1 || p.Errors[0].Message != "must be from 0 to 10 (layout shift score) for cls" {
		t.Errorf("cls 11: %+v", p.Errors)
	}
	p = e.do("POST", path, apitest.AdminKey, `{"metric":"ux_fid","operator":"lt","value":100,"device":"all"}`).Want(t, 422).Problem(t, "metric")
	if len(p.Errors) != 1 || !strings.Contains(p.Errors[0].Message, "never have data: use ux_inp") {
		t.Errorf("ux_fid: %+v", p.Errors)
	}
	// The ends of each range are accepted.
	for _, body := range []string{
		`{"metric":"cls","operator":"lt","value":10,"device":"all"}`,
		`{"metric":"lcp","operator":"lt","value":86400000,"device":"all"}`,
		`{"metric":"performance_score","operator":"gt","value":100,"device":"all"}`,
		`{"metric":"cls","operator":"lt","value":0.000001,"device":"all"}`,
	} {
		e.do("POST", path, apitest.AdminKey, body).Want(t, 201)
	}
}
