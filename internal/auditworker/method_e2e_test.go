package auditworker_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/model"
)

// TestAppliedThrottling audits the fixture page once on mobile, in real Chromium and
// Lighthouse, on a new website, whose method is applied: the run's report says Lighthouse
// throttled the load itself (configSettings.throttlingMethod devtools) with the slow 4G preset
// as DevTools applies it and the CPU slowdown calibrated from the worker's benchmark index;
// the stored result records the method, that index and the multiplier, which the page detail
// shows.
func TestAppliedThrottling(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium and Lighthouse")
	}
	e := newE2E(t, true)
	host, _ := fixtureSite(t)
	var site struct{ ID, Method string }
	e.call("POST", "/account/websites", `{"domain":"`+host+`"}`, 201, &site)
	if site.Method != model.MethodApplied {
		t.Fatalf("a new website's method is %q, want applied", site.Method)
	}
	var pages []struct{ ID string }
	e.call("POST", "/"+site.ID+"/settings/pages", `[{"url":"/","alias":"Home"}]`, 200, &pages)
	queued := time.Now().UTC()
	e.call("POST", "/"+site.ID+"/audits", `{"pages":["`+pages[0].ID+`"],"devices":["mobile"]}`, 202, nil)
	if p := e.work([]audit.Job{{Account: "acme", Website: site.ID, Page: pages[0].ID, Device: "mobile", Queued: queued}}); p.Done != 1 {
		t.Fatalf("progress %+v, want the audit done", p)
	}

	w, err := e.store.Website(context.Background(), "acme", site.ID)
	if err != nil {
		t.Fatal(err)
	}
	results, err := e.store.LabResults(context.Background(), w, pages[0].ID, "mobile", "20000101", "29991231")
	if err != nil || len(results) != 1 {
		t.Fatalf("lab results %+v, %v", results, err)
	}
	res := results[0]
	slow4G := model.NetworkPresets["mobileSlow4G"]
	if res.Method != model.MethodApplied || res.BenchmarkIndex <= 0 || res.CPUMultiplier != model.CalibratedCPU(slow4G.CPUSlowdown, res.BenchmarkIndex) {
		t.Fatalf("result measured by %q, benchmark index %v, CPU %v×: want applied, an index, and the preset's 4× calibrated from it",
			res.Method, res.BenchmarkIndex, res.CPUMultiplier)
	}
	t.Logf("benchmark index %v, CPU %v×, LCP %v ms", res.BenchmarkIndex, res.CPUMultiplier, res.Metrics["lcp"])

	var lhr struct {
		ConfigSettings struct {
			ThrottlingMethod string `json:"throttlingMethod"`
			Throttling       struct {
				RequestLatencyMs       float64 `json:"requestLatencyMs"`
				DownloadThroughputKbps float64 `json:"downloadThroughputKbps"`
				CPUSlowdownMultiplier  float64 `json:"cpuSlowdownMultiplier"`
			} `json:"throttling"`
		} `json:"configSettings"`
		Environment struct {
			BenchmarkIndex float64 `json:"benchmarkIndex"`
		} `json:"environment"`
	}
	if err := json.Unmarshal(storedObject(t, e.objects, res.ReportKey), &lhr); err != nil {
		t.Fatal(err)
	}
	s := lhr.ConfigSettings
	if s.ThrottlingMethod != "devtools" || s.Throttling.RequestLatencyMs != slow4G.RTTMs*model.DevtoolsRTTFactor ||
		s.Throttling.DownloadThroughputKbps != slow4G.ThroughputK*model.DevtoolsThroughputFactor || s.Throttling.CPUSlowdownMultiplier != res.CPUMultiplier {
		t.Errorf("the report's settings %+v: want devtools throttling, 562.5 ms, 1,474.56 kbit/s and CPU %v×", s, res.CPUMultiplier)
	}
	if lhr.Environment.BenchmarkIndex <= 0 {
		t.Errorf("the report has no benchmark index of its own")
	}

	var detail struct {
		Measurement struct {
			Method  string
			Summary string
		}
	}
	e.call("GET", "/"+site.ID+"/pages/"+pages[0].ID+"?device=mobile", "", 200, &detail)
	if detail.Measurement.Method != model.MethodApplied || !strings.HasPrefix(detail.Measurement.Summary, "Measured with applied throttling (CPU ") {
		t.Errorf("the page detail's measurement %+v", detail.Measurement)
	}
	checkAgreement(t, e, site.ID, pages[0].ID, res)
}

// checkAgreement checks that an applied audit's pictures explain its numbers, one load for
// both: the headline LCP is the LCP element's time in the diagnostics (within 50 ms), its four
// phases add up to it, a frame of the filmstrip shows it within 100 ms, the LCP resource's
// request ended before it, and the filmstrip's Speed Index is Lighthouse's (within 10 %).
func checkAgreement(t *testing.T, e *e2e, website, page string, res model.LabResult) {
	t.Helper()
	var got struct {
		Method      string
		Diagnostics model.Diagnostics
	}
	e.call("GET", "/"+website+"/pages/"+page+"/diagnostics?device=mobile", "", 200, &got)
	d, lcp := got.Diagnostics, res.Metrics["lcp"]
	if got.Method != model.MethodApplied || d.Marks.LCP == nil || d.LCP == nil {
		t.Fatalf("diagnostics of %q, LCP mark %v, element %+v", got.Method, d.Marks.LCP, d.LCP)
	}
	if diff := *d.Marks.LCP - lcp; diff < -50 || diff > 50 {
		t.Errorf("headline LCP %v ms, the diagnostics' %v ms: want within 50 ms", lcp, *d.Marks.LCP)
	}
	ph := d.LCP.Phases
	sum := ph.TTFB + ph.RenderDelay
	for _, v := range []*float64{ph.LoadDelay, ph.LoadDuration} {
		if v != nil {
			sum += *v
		}
	}
	if diff := sum - d.LCP.Time; diff < -5 || diff > 5 {
		t.Errorf("LCP phases %+v add up to %v ms, the LCP is %v ms", ph, sum, d.LCP.Time)
	}
	shown := -1.0
	for _, f := range d.Filmstrip {
		if f.Time >= *d.Marks.LCP-10 {
			shown = f.Time
			break
		}
	}
	if shown < 0 || shown > *d.Marks.LCP+100 {
		t.Errorf("the first frame at the LCP (%v ms) is at %v ms: want within 100 ms", *d.Marks.LCP, shown)
	}
	for _, q := range d.Requests {
		if q.LCP && q.End > *d.Marks.LCP {
			t.Errorf("the LCP resource %s ended at %v ms, after the LCP at %v ms", q.URL, q.End, *d.Marks.LCP)
		}
	}
	si := res.Metrics["speed_index"]
	if d.SpeedIndex == nil || *d.SpeedIndex < si*0.9 || *d.SpeedIndex > si*1.1 {
		t.Errorf("the filmstrip's Speed Index %v, Lighthouse's %v: want within 10 %%", d.SpeedIndex, si)
	}
	t.Logf("LCP %v ms (diagnostics %v ms, phases %v ms, frame at %v ms), Speed Index %v (frames %v), %d frames",
		lcp, *d.Marks.LCP, sum, shown, si, *d.SpeedIndex, len(d.Filmstrip))
}
