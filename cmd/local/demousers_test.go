package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/demoshop"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

// checkDemoUsers checks, through the API, the demo's real users: every page view of the four
// weeks counted (the replayed ones and the real visits'), each page's attribution as the real
// visits measured it (the hero as LCP element, the buy button and the shop's cart script for
// INP, a shifted element for CLS), the deploy seen by real users, and the field p75 of a
// 28-day window moving after the deploy by a part of what the lab moved.
func (d *dashboard) checkDemoUsers(t *testing.T) {
	W := "/" + d.site.ID
	now := time.Now().UTC()
	from, to := now.AddDate(0, 0, 1-demoHistoryDays).Format("20060102"), now.Format("20060102")
	var views struct {
		Result struct {
			Count int
			List  map[string]any
		}
	}
	d.call(t, "GET", W+"/field-testing/pages?timing=lcp&date="+from+"-"+to, dashViewerKey, "", 200, &views)
	visits := 2 * len(metrics.Devices) * len(demoshop.Paths) // each page on each device, before and after the deploy
	if want := demoReplayedViews(now) + visits; views.Result.Count != want || len(views.Result.List) != 2 {
		t.Errorf("real users: %d page views of %d pages over %d days, want %d of 2", views.Result.Count, len(views.Result.List), demoHistoryDays, want)
	}
	attributions := func(metric string) string {
		var raw json.RawMessage
		d.call(t, "GET", W+"/field-testing/attributions?metric="+metric+"&date="+from+"-"+to, dashViewerKey, "", 200, &raw)
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
		d.call(t, "GET", W+"/field-testing/distribution?metric=lcp&device=mobile&page="+home+"&date="+days, dashViewerKey, "", 200, &dist)
		return dist.Result.Value
	}
	day := func(daysAgo int) string { return now.AddDate(0, 0, -daysAgo).Format("20060102") }
	before, after := p75(day(demoHistoryDays-1)+"-"+day(demoDeployedDaysAgo+1)), p75(day(demoDeployedDaysAgo-1)+"-"+day(0))
	t.Logf("real users' LCP p75 on mobile: %v before the deploy, %v after", before, after)
	if !(after > 1.3*before) {
		t.Errorf("real users' LCP p75 on mobile: %v before the deploy, %v after: want it as much higher as the lab's", before, after)
	}

	var rows struct{ Result struct{ List []pageRow } }
	d.call(t, "GET", W+"/pages?date="+day(demoHistoryDays)+"-"+day(0), dashViewerKey, "", 200, &rows)
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
	for i := range demoHistoryDays + 1 {
		if value(i, "ux_lcp") == 0 || value(i, "ux_inp") == 0 {
			t.Errorf("%s: no field LCP or INP of the home page on mobile: %v", day(i), byDay[day(i)])
		}
	}
	ux, lab := []float64{}, []float64{}
	for i := demoDeployedDaysAgo + 1; i >= 0; i-- {
		ux, lab = append(ux, value(i, "ux_lcp")), append(lab, value(i, "lcp"))
	}
	t.Logf("the home page on mobile from the day before the deploy: field LCP p75 %v, lab LCP %v", ux, lab)
	if !slices.IsSorted(ux) || ux[len(ux)-1] <= ux[0] {
		t.Errorf("field LCP p75 %v from the day before the deploy: want it rising", ux)
	}
	if rise, labRise := ux[len(ux)-1]-ux[0], lab[len(lab)-1]-lab[0]; rise > labRise/2 {
		t.Errorf("field LCP p75 rose %v ms in %d days, the lab's %v ms overnight: a 28-day window moves a part of the way", rise, demoDeployedDaysAgo, labRise)
	}
}

// A replayed view keeps its visit's attribution, its LCP phases adding up to its new LCP, and
// its load at the lab's pace; counts stay as measured.
func TestReshape(t *testing.T) {
	visit := rum.Beacon{Metrics: map[string]float64{"lcp": 100, "fcp": 80, "ttfb": 10, "fully_loaded_time": 200, "inp": 160, "cls": 0.02, "dom_elements": 21},
		Attribution: &rum.Attribution{
			LCP: &rum.LCPAttribution{Element: "main>img.hero", Phases: [4]float64{10, 20, 30, 40}},
			INP: &rum.INPAttribution{Target: "#buy", Phases: [3]float64{5, 150, 5}, Scripts: []rum.Script{{URL: "/cart.js", Duration: 150}}},
			CLS: &rum.CLSAttribution{Target: "main>img.hero", Time: 300},
		}}
	got := reshape(visit, map[string]float64{"lcp": 2000, "fcp": 1500, "ttfb": 50}, 1.1, 2)
	m := got.Metrics
	if m["lcp"] != 2200 || m["fcp"] != 1650 || m["ttfb"] != 55 || m["fully_loaded_time"] != 4400 || m["inp"] != 320 || m["cls"] != 0.04 || m["dom_elements"] != 21 {
		t.Errorf("metrics %v", m)
	}
	a := got.Attribution
	if p := a.LCP.Phases; p[0]+p[1]+p[2]+p[3] != m["lcp"] || a.LCP.Element != "main>img.hero" {
		t.Errorf("LCP attribution %+v, want phases adding up to %v", a.LCP, m["lcp"])
	}
	if a.INP.Target != "#buy" || a.INP.Phases[1] != 300 || a.INP.Scripts[0].Duration != 300 || a.CLS.Time != 300*20*1.1 {
		t.Errorf("INP %+v, CLS %+v", a.INP, a.CLS)
	}
	if visit.Metrics["lcp"] != 100 || visit.Attribution.LCP.Phases[3] != 40 || visit.Attribution.INP.Scripts[0].Duration != 150 {
		t.Errorf("the visit's beacon changed: %v %+v", visit.Metrics, visit.Attribution.INP)
	}
}

// A user-experience record is the window's p75 (nearest rank) and the shares of each rating.
func TestUXVital(t *testing.T) {
	lcp, _ := rum.VitalIndex("lcp")
	got := uxVital(rum.Vitals[lcp], []float64{5000, 1000, 3000, 2000})
	if want := (model.Vital{P75: 3000, Good: 50, NeedsImprovement: 25, Poor: 25}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// The replay has each day's views on each device, over the history and the window before its
// first day, and each of a visit of its device and of the version of its day.
func TestReplayVisits(t *testing.T) {
	var visits []demoVisit
	for _, version := range []string{"2.3", "2.4"} {
		for _, device := range metrics.Devices {
			for _, path := range demoshop.Paths {
				visits = append(visits, demoVisit{device: device, version: version, path: path, userAgent: device + version,
					beacon: rum.Beacon{Metrics: map[string]float64{"lcp": 100}}})
			}
		}
	}
	now := time.Now().UTC()
	views, err := replayVisits(visits, func(path, device, version string) map[string]float64 { return nil }, now)
	if err != nil {
		t.Fatal(err)
	}
	perDay := map[string]int{}
	for _, v := range views {
		perDay[fmt.Sprint(v.daysAgo, v.device)]++
		version := v.userAgent[len(v.device):]
		if v.daysAgo > demoDeployedDaysAgo && version != "2.3" || v.daysAgo < demoDeployedDaysAgo && version != "2.4" {
			t.Errorf("a view of %d days ago of version %s", v.daysAgo, version)
		}
	}
	for daysAgo := range demoHistoryDays + uxWindowDays {
		for _, device := range metrics.Devices {
			if got, want := perDay[fmt.Sprint(daysAgo, device)], demoDailyViews(device, daysAgo, now); got != want {
				t.Errorf("%d days ago on %s: %d views, want %d", daysAgo, device, got, want)
			}
		}
	}
	if len(perDay) != (demoHistoryDays+uxWindowDays)*len(metrics.Devices) {
		t.Errorf("views on %d days and devices, want %d", len(perDay), (demoHistoryDays+uxWindowDays)*len(metrics.Devices))
	}
}

// demoReplayedViews is how many page views the replay sends: those of the history's days.
func demoReplayedViews(now time.Time) int {
	n := 0
	for daysAgo := range demoHistoryDays {
		for _, device := range metrics.Devices {
			n += demoDailyViews(device, daysAgo, now)
		}
	}
	return n
}
