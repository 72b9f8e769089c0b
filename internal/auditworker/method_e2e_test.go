package auditworker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
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
	e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+host+`"}`, 201, &site)
	if site.Method != model.MethodApplied {
		t.Fatalf("a new website's method is %q, want applied", site.Method)
	}
	var pages []struct{ ID string }
	e.api.Call(e.t, "POST", "/"+site.ID+"/settings/pages", `[{"url":"/","alias":"Home"}]`, 200, &pages)
	queued := time.Now().UTC()
	e.api.Call(e.t, "POST", "/"+site.ID+"/audits", `{"pages":["`+pages[0].ID+`"],"devices":["mobile"]}`, 202, nil)
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
			PauseAfterFcpMs         int `json:"pauseAfterFcpMs"`
			PauseAfterLoadMs        int `json:"pauseAfterLoadMs"`
			NetworkQuietThresholdMs int `json:"networkQuietThresholdMs"`
			CPUQuietThresholdMs     int `json:"cpuQuietThresholdMs"`
		} `json:"configSettings"`
		Environment struct {
			BenchmarkIndex float64 `json:"benchmarkIndex"`
		} `json:"environment"`
		Timing struct {
			Entries []struct{ Name string } `json:"entries"`
		} `json:"timing"`
		Audits struct {
			Interactive struct {
				NumericValue float64 `json:"numericValue"`
			} `json:"interactive"`
			Metrics struct {
				Details struct {
					Items []struct {
						ObservedTraceEnd float64 `json:"observedTraceEnd"`
					} `json:"items"`
				} `json:"details"`
			} `json:"metrics"`
		} `json:"audits"`
	}
	if err := json.Unmarshal(storedReport(t, e.objects, res.ReportKey), &lhr); err != nil {
		t.Fatal(err)
	}
	s := lhr.ConfigSettings
	if s.ThrottlingMethod != "devtools" || s.Throttling.RequestLatencyMs != slow4G.RTTMs*model.DevtoolsRTTFactor ||
		s.Throttling.DownloadThroughputKbps != slow4G.ThroughputK*model.DevtoolsThroughputFactor || s.Throttling.CPUSlowdownMultiplier != res.CPUMultiplier {
		t.Errorf("the report's settings %+v: want devtools throttling, 562.5 ms, 1,474.56 kbit/s and CPU %v×", s, res.CPUMultiplier)
	}
	// The waits at the end of the load are openvitals' (Lighthouse would have raised each to
	// 5.25 s), and TBT, whose window ends at time to interactive, was still computed.
	waits := map[string]int{"pauseAfterFcpMs": s.PauseAfterFcpMs, "pauseAfterLoadMs": s.PauseAfterLoadMs,
		"networkQuietThresholdMs": s.NetworkQuietThresholdMs, "cpuQuietThresholdMs": s.CPUQuietThresholdMs}
	if !maps.Equal(waits, model.AppliedWaits) {
		t.Errorf("the report's waits %v, want %v", waits, model.AppliedWaits)
	}
	if _, ok := res.Metrics["tbt"]; !ok {
		t.Errorf("no TBT in %v", res.Metrics)
	}
	// The runner's quiet window ended the load in Lighthouse's place, and its trace still holds
	// the 5 s after time to interactive that Lighthouse needs to find it.
	if !slices.ContainsFunc(lhr.Timing.Entries, func(e struct{ Name string }) bool { return e.Name == "lh:gather:quietWindow" }) {
		t.Errorf("the report's timing has no lh:gather:quietWindow entry")
	}
	tti := lhr.Audits.Interactive.NumericValue
	if items := lhr.Audits.Metrics.Details.Items; tti <= 0 || len(items) == 0 || items[0].ObservedTraceEnd < tti+5000 {
		t.Errorf("time to interactive %v ms, the trace's end %+v: want the trace to hold the 5 s after it", tti, items)
	}
	if lhr.Environment.BenchmarkIndex <= 0 {
		t.Errorf("the report has no benchmark index of its own")
	}

	detail := e.pageDetail(site.ID, pages[0].ID, "mobile")
	if detail.Measurement.Method != model.MethodApplied || !strings.HasPrefix(detail.Measurement.Summary, "Measured with applied throttling (CPU ") {
		t.Errorf("the page detail's measurement %+v", detail.Measurement)
	}
	checkAgreement(t, e, site.ID, pages[0].ID, "mobile", res)
}

// TestAppliedAgreement audits the four diagnostics fixture pages (internal/lighthouse's
// testdata: the late hero, the shifting banner, the long task and the render-blocking third
// party) on mobile and desktop with applied throttling, through the API and the worker in real
// Chromium and Lighthouse, and checks for each of the eight loads that the pictures explain the
// numbers (checkAgreement).
func TestAppliedAgreement(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Chromium and Lighthouse")
	}
	e := newE2E(t, true)
	host := serveAgreementFixtures(t)
	var site struct{ ID string }
	e.api.Call(e.t, "POST", "/account/websites", `{"domain":"`+host+`"}`, 201, &site)
	fixtures := []string{"hero.html", "shifts.html", "longtask.html", "thirdparty.html"}
	var list []string
	for _, f := range fixtures {
		list = append(list, `{"url":"/`+f+`","alias":"`+f+`"}`)
	}
	var pages []struct{ ID, URL string }
	e.api.Call(e.t, "POST", "/"+site.ID+"/settings/pages", "["+strings.Join(list, ",")+"]", 200, &pages)
	var ids []string
	var jobs []audit.Job
	queued := time.Now().UTC()
	for _, p := range pages {
		ids = append(ids, `"`+p.ID+`"`)
		for _, d := range []string{"mobile", "desktop"} {
			jobs = append(jobs, audit.Job{Account: "acme", Website: site.ID, Page: p.ID, Device: d, Queued: queued})
		}
	}
	e.api.Call(e.t, "POST", "/"+site.ID+"/audits", `{"pages":[`+strings.Join(ids, ",")+`],"devices":["mobile","desktop"]}`, 202, nil)
	if p := e.work(jobs); p.Done != len(jobs) {
		t.Fatalf("progress %+v, want %d audits done", p, len(jobs))
	}
	w, err := e.store.Website(context.Background(), "acme", site.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		for _, d := range []string{"mobile", "desktop"} {
			t.Run(strings.TrimPrefix(p.URL, "/")+"/"+d, func(t *testing.T) {
				results, err := e.store.LabResults(context.Background(), w, p.ID, d, "20000101", "29991231")
				if err != nil || len(results) != 1 || results[0].Method != model.MethodApplied {
					t.Fatalf("lab results %+v, %v", results, err)
				}
				checkAgreement(t, e, site.ID, p.ID, d, results[0])
			})
		}
	}
}

// serveAgreementFixtures serves internal/lighthouse's diagnostics fixture pages as its own
// test does (/slow/<file> answers after 400 ms, the third party's script after 200 ms), the
// third party from a second site (localhost against 127.0.0.1), and returns the first's host.
func serveAgreementFixtures(t testing.TB) string {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		delay := time.Duration(0)
		if rest, ok := strings.CutPrefix(name, "slow/"); ok {
			name, delay = rest, 400*time.Millisecond
		}
		if name == "gtm.js" {
			delay = 200 * time.Millisecond
		}
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		dir := "../lighthouse/testdata/"
		b, err := os.ReadFile(filepath.Join(dir, "diag", filepath.Base(name)))
		if os.IsNotExist(err) {
			b, err = os.ReadFile(filepath.Join(dir, "site", filepath.Base(name)))
		}
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(name, ".html") {
			_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			b = bytes.ReplaceAll(b, []byte("THIRD_PARTY_ORIGIN"), []byte("http://localhost:"+port))
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// checkAgreement checks that an applied audit's pictures explain its numbers, one load for
// both: the headline LCP is the LCP element's time in the diagnostics (within 50 ms), its four
// phases add up to it, a frame of the filmstrip shows it within 100 ms, the LCP resource's
// request ended before it, and the filmstrip's Speed Index is Lighthouse's (within 10 %).
func checkAgreement(t *testing.T, e *e2e, website, page, device string, res model.LabResult) {
	t.Helper()
	var got struct {
		Method      string
		Diagnostics model.Diagnostics
	}
	e.api.Call(e.t, "GET", "/"+website+"/pages/"+page+"/diagnostics?device="+device, "", 200, &got)
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
