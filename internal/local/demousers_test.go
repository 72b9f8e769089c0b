package local

import (
	"fmt"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/demoshop"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

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
		if v.daysAgo > DemoDeployedDaysAgo && version != "2.3" || v.daysAgo < DemoDeployedDaysAgo && version != "2.4" {
			t.Errorf("a view of %d days ago of version %s", v.daysAgo, version)
		}
	}
	for daysAgo := range DemoHistoryDays + uxWindowDays {
		for _, device := range metrics.Devices {
			if got, want := perDay[fmt.Sprint(daysAgo, device)], DemoDailyViews(device, daysAgo, now); got != want {
				t.Errorf("%d days ago on %s: %d views, want %d", daysAgo, device, got, want)
			}
		}
	}
	if len(perDay) != (DemoHistoryDays+uxWindowDays)*len(metrics.Devices) {
		t.Errorf("views on %d days and devices, want %d", len(perDay), (DemoHistoryDays+uxWindowDays)*len(metrics.Devices))
	}
}
