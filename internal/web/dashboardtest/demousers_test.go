package dashboardtest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/demoshop"
	"github.com/openvitals/openvitals/internal/local"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/testing/localtest"
)

// checkDemoUsers checks, through the API, the demo's real users: every page view of the four
// weeks counted (the replayed ones and the real visits'), each page's attribution as the real
// visits measured it (the hero as LCP element, the buy button and the shop's cart script for
// INP, a shifted element for CLS), the deploy seen by real users, and the field p75 of a
// 28-day window moving after the deploy by a part of what the lab moved.
func (d *dashboard) checkDemoUsers(t *testing.T) {
	W := "/" + d.site.ID
	now := time.Now().UTC()
	from, to := now.AddDate(0, 0, 1-local.DemoHistoryDays).Format("20060102"), now.Format("20060102")
	var views struct {
		Result struct {
			Count int
			List  map[string]any
		}
	}
	d.Call(t, "GET", W+"/field-testing/pages?timing=lcp&date="+from+"-"+to, localtest.ViewerKey, "", 200, &views)
	visits := 2 * len(metrics.Devices) * len(demoshop.Paths) // each page on each device, before and after the deploy
	if want := demoReplayedViews(now) + visits; views.Result.Count != want || len(views.Result.List) != 2 {
		t.Errorf("real users: %d page views of %d pages over %d days, want %d of 2", views.Result.Count, len(views.Result.List), local.DemoHistoryDays, want)
	}
	attributions := func(metric string) string {
		var raw json.RawMessage
		d.Call(t, "GET", W+"/field-testing/attributions?metric="+metric+"&date="+from+"-"+to, localtest.ViewerKey, "", 200, &raw)
		return string(raw)
	}
	for metric, wants := range map[string][]string{
		"lcp": {"img.hero", "/hero.png"},
		"inp": {"#buy", "#checkout", "/cart.js"},
		"cls": {"main"},
	} {
		got := attributions(metric)
		for _, w := range wants {
			if !strings.Contains(got, w) {
				t.Errorf("%s attributions %s: want %q", metric, got, w)
			}
		}
	}

	// The home page on mobile: real users' p75 before and after the deploy differ as the lab's
	// do, and the user-experience record's p75 moves only a part of the way by today.
	var home string
	for _, p := range d.pages {
		if p.URL == "/" {
			home = p.ID
		}
	}
	p75 := func(days string) float64 {
		var dist struct{ Result struct{ Value float64 } }
		d.Call(t, "GET", W+"/field-testing/distribution?metric=lcp&device=mobile&page="+home+"&date="+days, localtest.ViewerKey, "", 200, &dist)
		return dist.Result.Value
	}
	day := func(daysAgo int) string { return now.AddDate(0, 0, -daysAgo).Format("20060102") }
	before, after := p75(day(local.DemoHistoryDays-1)+"-"+day(local.DemoDeployedDaysAgo+1)), p75(day(local.DemoDeployedDaysAgo-1)+"-"+day(0))
	t.Logf("real users' LCP p75 on mobile: %v before the deploy, %v after", before, after)
	if !(after > 1.3*before) {
		t.Errorf("real users' LCP p75 on mobile: %v before the deploy, %v after: want it as much higher as the lab's", before, after)
	}

	var rows struct{ Result struct{ List []pageRow } }
	d.Call(t, "GET", W+"/pages?date="+day(local.DemoHistoryDays)+"-"+day(0), localtest.ViewerKey, "", 200, &rows)
	byDay := map[string]map[string]any{}
	for _, r := range rows.Result.List {
		if r.ID == home && r.Device == "mobile" {
			for _, tl := range r.Timeline {
				date, _ := tl["date"].(string)
				byDay[strings.ReplaceAll(date, "-", "")] = tl
			}
		}
	}
	value := func(daysAgo int, field string) float64 {
		v, _ := byDay[day(daysAgo)][field].(float64)
		return v
	}
	for i := range local.DemoHistoryDays + 1 {
		if value(i, "ux_lcp") == 0 || value(i, "ux_inp") == 0 {
			t.Errorf("%s: no field LCP or INP of the home page on mobile: %v", day(i), byDay[day(i)])
		}
	}
	ux, lab := []float64{}, []float64{}
	for i := local.DemoDeployedDaysAgo + 1; i >= 0; i-- {
		ux, lab = append(ux, value(i, "ux_lcp")), append(lab, value(i, "lcp"))
	}
	t.Logf("the home page on mobile from the day before the deploy: field LCP p75 %v, lab LCP %v", ux, lab)
	if !slices.IsSorted(ux) || ux[len(ux)-1] <= ux[0] {
		t.Errorf("field LCP p75 %v from the day before the deploy: want it rising", ux)
	}
	if rise, labRise := ux[len(ux)-1]-ux[0], lab[len(lab)-1]-lab[0]; rise > labRise/2 {
		t.Errorf("field LCP p75 rose %v ms in %d days, the lab's %v ms overnight: a 28-day window moves a part of the way", rise, local.DemoDeployedDaysAgo, labRise)
	}
}

// demoReplayedViews is how many page views the replay sends: those of the history's days.
func demoReplayedViews(now time.Time) int {
	n := 0
	for daysAgo := range local.DemoHistoryDays {
		for _, device := range metrics.Devices {
			n += local.DemoDailyViews(device, daysAgo, now)
		}
	}
	return n
}
