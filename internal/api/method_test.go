package api_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/apitest"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// TestMeasurementMethod: a new website is measured with applied throttling, one stored before
// methods reads as simulated; a profile shows its own method or its website's; a bad method
// is a 422 that stores nothing; a default profile switching an older website to applied is
// annotated website-wide as a switch of method; the page detail says how its newest result
// was measured.
func TestMeasurementMethod(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	type siteOut struct {
		ID     string `json:"id"`
		Method string `json:"method"`
	}
	var fresh, simulated siteOut
	e.do("POST", "/account/websites", apitest.AdminKey, map[string]any{"domain": "new.example.com"}).Want(t, 201).Decode(t, &fresh)
	e.do("POST", "/account/websites", apitest.AdminKey, map[string]any{"domain": "sim.example.com", "method": "simulated"}).Want(t, 201).Decode(t, &simulated)
	if fresh.Method != model.MethodApplied || simulated.Method != model.MethodSimulated {
		t.Errorf("new websites' methods %q and %q, want applied and simulated", fresh.Method, simulated.Method)
	}
	e.do("POST", "/account/websites", apitest.AdminKey, map[string]any{"domain": "bad.example.com", "method": "devtools"}).Want(t, 422)
	sites, err := e.store.Websites(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 2 {
		t.Errorf("%d websites after a bad method, want 2", len(sites))
	}

	// A website stored before methods: no method, which reads as simulated.
	old, _ := awstest.Website(t, e.store, model.Website{Account: "acme", Domain: "old.example.com", DisplayName: "old"}, nil)
	if old, err = e.store.Website(ctx, "acme", old.ID); err != nil || old.Method != "" {
		t.Fatalf("old website %+v, %v", old, err)
	}
	var list struct {
		List []siteOut `json:"list"`
	}
	e.do("GET", "/websites", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &list)
	for _, s := range list.List {
		if s.ID == old.ID && s.Method != model.MethodSimulated {
			t.Errorf("the website stored before methods shows %q, want simulated", s.Method)
		}
	}
	pages := e.createPages(old.ID, "/")
	base := "/" + old.ID + "/profiles"
	var p struct {
		ID     string `json:"id"`
		Method string `json:"method"`
	}
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Plain", "pages": []map[string]string{{"page": pages[0].ID, "device": "desktop"}}}).Want(t, 201).Decode(t, &p)
	if p.Method != model.MethodSimulated {
		t.Errorf("a profile without a method on an older website shows %q, want its website's, simulated", p.Method)
	}
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Bad", "method": "devtools"}).Want(t, 422)
	e.do("PUT", base+"/"+p.ID, apitest.AdminKey, map[string]any{"method": 4}).Want(t, 400)
	e.do("PUT", base+"/"+p.ID, apitest.AdminKey, map[string]any{"method": "fast"}).Want(t, 422)
	profiles, err := e.store.Profiles(ctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if len(profiles) != 1 || profiles[0].Method != "" {
		t.Errorf("profiles after bad methods: %+v, want the one without a method", profiles)
	}

	// The admin switches the older website: a default profile measuring by applied throttling.
	since := time.Now().Add(-time.Minute)
	var def struct {
		Method string `json:"method"`
	}
	e.do("POST", base, apitest.AdminKey, map[string]any{"name": "Applied", "default": true, "method": "applied"}).Want(t, 201).Decode(t, &def)
	if def.Method != model.MethodApplied {
		t.Errorf("default profile's method %q", def.Method)
	}
	anns, _, err := e.store.Annotations(ctx, old, since, time.Now().Add(time.Minute), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	switched := 0
	for _, a := range anns {
		if strings.Contains(a.Text, "Measurement method switched from simulated throttling to applied throttling") && len(a.Pages) == 0 {
			switched++
		}
	}
	if switched != 1 {
		t.Errorf("%d website-wide annotations of the switch, want 1: %+v", switched, anns)
	}
	if profiles, err = e.store.Profiles(ctx, old); err != nil {
		t.Fatal(err)
	}
	if got := model.MethodFor(old, profiles, pages[0].ID, "mobile"); got != model.MethodApplied {
		t.Errorf("the home page on mobile is measured %q after the switch, want applied", got)
	}
	if got := model.MethodFor(old, profiles, pages[0].ID, "desktop"); got != model.MethodSimulated {
		t.Errorf("the home page on desktop (its own profile, without a method) is measured %q, want its website's simulated", got)
	}

	// The page detail names the newest result's method.
	home := storedPage(t, e, old, pages[0].ID)
	today := model.Day(time.Now())
	if err := e.store.PutLabResult(ctx, old, home, model.LabResult{Device: "mobile", Day: today, Runs: 3, Audited: time.Now(),
		Metrics: map[string]float64{"lcp": 2500}, Method: model.MethodApplied, CPUMultiplier: 7.3, BenchmarkIndex: 2797.2}); err != nil {
		t.Fatal(err)
	}
	var detail struct {
		Measurement struct {
			Method         string  `json:"method"`
			CPUMultiplier  float64 `json:"cpuMultiplier"`
			BenchmarkIndex float64 `json:"benchmarkIndex"`
			Summary        string  `json:"summary"`
		} `json:"measurement"`
	}
	e.do("GET", "/"+old.ID+"/pages/"+home.ID+"?device=mobile", apitest.ViewerKey, nil).Want(t, 200).Decode(t, &detail)
	m := detail.Measurement
	if m.Method != model.MethodApplied || m.CPUMultiplier != 7.3 || m.BenchmarkIndex != 2797 ||
		m.Summary != "Measured with applied throttling (CPU 7.3× calibrated from benchmark index 2,797)" {
		t.Errorf("measurement %+v", m)
	}
}
