package dashboardtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/testing/localtest"
)

// TestDashboardProfiles drives the test profiles' view in Chromium over the local service: an
// admin reaches it from the settings, creates a profile with a header, a cookie, login steps,
// a page, a network preset and the simulated method; the list shows their names and never the
// secret values, which the API keeps; the page view names the profile of its newest result and
// how it was measured (simulated, or applied with its calibration); an experiment is shown
// beside its control and deleted from its view. It writes the view's
// screenshots (see screenshotDir).
func TestDashboardProfiles(t *testing.T) {
	d := startService(t, 1, false)
	shots := screenshotDir(t)
	siteID, pages := d.website(t, "shop.example", "Shop", "", `[{"url":"/account","alias":"Account"},{"url":"/","alias":"Home"}]`)
	W := "/" + siteID
	const secret = "dash-5ecret-header-value"

	b := launchBrowser(t)
	tb := d.signedIn(t, b, localtest.AdminKey)

	tb.view("#/w/" + siteID + "/settings")
	tb.click("a", "^Test profiles$")
	tb.waitFor("the profiles view", `() => location.hash.endsWith('/profiles') && document.querySelector('#main h1')?.textContent === 'Test profiles'`)
	tb.waitIdle()
	tb.click("summary", "New test profile")
	form := "form[aria-label='New test profile'] "
	tb.fill(form+"input[name=name]", "Signed in")
	tb.fill(form+"textarea[name=headers]", "X-Token: "+secret)
	tb.fill(form+"textarea[name=cookies]", "consent=yes")
	tb.fill(form+"textarea[name=origins]", "https://api.shop.example")
	tb.fill(form+"textarea[name=login]", "navigate | /login\ntype | #password | pw-"+secret+"\nclick | #submit | nav")
	tb.eval(`() => { const s = document.querySelector("form[aria-label='New test profile'] select[name=preset]"); s.value = 'mobileRegular3G'; }`)
	tb.eval(`() => { document.querySelector("form[aria-label='New test profile'] input[name=page]").checked = true; }`)
	if m := tb.eval(`() => document.querySelector("form[aria-label='New test profile'] select[name=method]").value`); m != model.MethodApplied {
		t.Errorf("the form's method is %v at first, want the new website's, applied", m)
	}
	tb.eval(`() => { document.querySelector("form[aria-label='New test profile'] select[name=method]").value = 'simulated'; }`)
	if sub := tb.text("#website-method"); !strings.Contains(sub, "measured with applied throttling") {
		t.Errorf("the profiles view says %q of the website's method", sub)
	}
	tb.screenshot(shots, "profiles-new")
	tb.click(form+"button[type=submit]", "Create profile")
	tb.waitFor("the profile listed", `() => document.querySelector('#main table') !== null && document.querySelector('#main table').textContent.includes('Signed in')`)
	listed := tb.text("#main table")
	for _, want := range []string{"Signed in", "Account · desktop", "X-Token, consent", "3 login steps", "also to https://api.shop.example", "mobileRegular3G", "simulated throttling"} {
		if !strings.Contains(listed, want) {
			t.Errorf("the list %q does not show %q", listed, want)
		}
	}
	if strings.Contains(tb.eval(`() => document.body.innerHTML`).(string), secret) {
		t.Error("the page shows a secret value after saving")
	}
	var list struct {
		Result struct {
			List []struct {
				ID, Name string
				Method   string
				Headers  []struct{ Name string }
				Origins  []string
				Login    []struct{ Type, Target string }
				Pages    []struct{ Page, Device string }
			}
		}
	}
	d.Call(t, "GET", W+"/profiles", localtest.ViewerKey, "", 200, &list)
	if len(list.Result.List) != 1 || len(list.Result.List[0].Headers) != 1 || len(list.Result.List[0].Login) != 3 || len(list.Result.List[0].Origins) != 1 ||
		len(list.Result.List[0].Pages) != 1 || list.Result.List[0].Pages[0].Page != pages[0].ID || list.Result.List[0].Method != model.MethodSimulated {
		t.Fatalf("profiles after the form: %+v", list.Result.List)
	}
	tb.screenshot(shots, "profiles")
	tb.narrow(shots, "profiles", "")

	// The page view names the profile of the newest result.
	site, err := d.Store.Website(context.Background(), "acme", siteID)
	if err != nil {
		t.Fatal(err)
	}
	page, err := d.Store.Page(context.Background(), site, pages[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	if err := d.Store.PutLabResult(context.Background(), site, page, model.LabResult{Page: page.ID, Device: "desktop", Day: model.Day(now), Audited: now, Runs: 1,
		Metrics: map[string]float64{"lcp": 2100, "fcp": 1500, "cls": 0.02, "tbt": 120, "performance_score": 81}, LighthouseVersion: "13.5.0",
		ProfileID: list.Result.List[0].ID, ProfileName: "Signed in", Method: model.MethodSimulated, CPUMultiplier: 1, BenchmarkIndex: 2800}); err != nil {
		t.Fatal(err)
	}
	tb.view("#/w/" + siteID + "/page/" + page.ID + "?device=desktop")
	if sub := tb.text("#main p.sub"); !strings.Contains(sub, "measured with the test profile Signed in") {
		t.Errorf("the page view says %q, want the profile named", sub)
	}
	if m := tb.text("#measurement"); m != "Simulated throttling: the numbers model a slow load computed from a fast one." {
		t.Errorf("the page view says %q of how it was measured", m)
	}
	// On mobile, no profile: the new website's applied throttling, calibrated.
	if err := d.Store.PutLabResult(context.Background(), site, page, model.LabResult{Page: page.ID, Device: "mobile", Day: model.Day(now), Audited: now, Runs: 3,
		Metrics: map[string]float64{"lcp": 4100, "fcp": 2500, "cls": 0.02, "tbt": 320, "performance_score": 61}, LighthouseVersion: "13.5.0",
		Method: model.MethodApplied, CPUMultiplier: 7.3, BenchmarkIndex: 2797}); err != nil {
		t.Fatal(err)
	}
	tb.view("#/w/" + siteID + "/page/" + page.ID + "?device=mobile")
	if m := tb.text("#measurement"); m != "Measured with applied throttling (CPU 7.3× calibrated from benchmark index 2,797)." {
		t.Errorf("the page view says %q of how it was measured", m)
	}
	tb.screenshot(shots, "page-measurement")

	// Experiments: reached from the settings; a completed one shows its metrics beside its
	// control's (stored as the worker stores it: the service cannot reach shop.example).
	x := model.Experiment{ID: "exp_dash", Page: page.ID, Device: "mobile", Status: model.RunCompleted,
		Changes:  model.ExperimentChanges{Block: []string{"*://www.googletagmanager.com/*"}},
		Control:  &model.ExperimentAudit{Metrics: map[string]float64{"tbt": 450, "lcp": 2600, "bytes_total": 310000}},
		Measured: &model.ExperimentAudit{Metrics: map[string]float64{"tbt": 30, "lcp": 2100, "bytes_total": 120000}}, Finished: &now}
	if err := d.Store.CreateExperiment(context.Background(), site, &x); err != nil {
		t.Fatal(err)
	}
	tb.view("#/w/" + siteID + "/settings")
	tb.click("a", "^experiments$")
	tb.waitFor("the experiments view", `() => document.querySelector('#main h1')?.textContent === 'Experiments'`)
	tb.waitIdle()
	if list := tb.text("#main table"); !strings.Contains(list, "block *://www.googletagmanager.com/*") || !strings.Contains(list, "completed") {
		t.Errorf("the experiments list %q", list)
	}
	tb.screenshot(shots, "experiments")
	tb.narrow(shots, "experiments", "")
	tb.view("#/w/" + siteID + "/experiments/" + x.ID)
	if cmp := tb.text("#main table"); !strings.Contains(cmp, "Total Blocking Time") || !strings.Contains(cmp, "450") || !strings.Contains(cmp, "30") {
		t.Errorf("the experiment's comparison %q does not show TBT 450 → 30", cmp)
	}
	tb.screenshot(shots, "experiment")
	tb.narrow(shots, "experiment", "")

	// Deleted from its view, after confirming: back to the list, which no longer has it.
	tb.eval(`() => { window.confirm = () => true; }`)
	tb.click("#delete-experiment", "Delete this experiment")
	tb.waitFor("the list without it", `() => location.hash.endsWith('/experiments') && document.querySelector('#main h1')?.textContent === 'Experiments' && !document.getElementById('main').hasAttribute('aria-busy')`)
	if tb.has("#main table") {
		t.Errorf("the experiments list still shows %q", tb.text("#main table"))
	}
	if _, err := d.Store.Experiment(context.Background(), site, x.ID); !model.IsNotFound(err) {
		t.Errorf("the experiment after its deletion: %v, want not found", err)
	}
}
