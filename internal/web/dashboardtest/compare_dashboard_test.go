package dashboardtest

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/testing/localtest"
)

// TestDashboardCompare drives the comparison view in Chromium over the demo website: the
// deploy's LCP regression on mobile links to the comparison of its last good and first bad
// day, where the deploy is visible (the hero appears later in the second filmstrip, and its
// waterfall bar grows by about the LCP's change: both loads were measured with applied
// throttling); the view shows the API's metrics and changes, both filmstrips (every frame
// loaded) and the requests that changed; the page view picks two days; a day without a result
// is an error in place of the view. It writes the view's screenshot (see screenshotDir).
func TestDashboardCompare(t *testing.T) {
	d := startDemo(t, 1)
	shots := screenshotDir(t)
	W := "/" + d.site.ID
	type link struct{ Page, Device, Base, Target, Path string }
	var regs struct {
		Result struct {
			List []struct {
				ID, Metric, Device string
				Comparison         *link
			}
		}
	}
	d.Call(t, "GET", W+"/regressions?kind=regression&source=lab", localtest.ViewerKey, "", 200, &regs)
	var c *link
	var regID string
	for _, r := range regs.Result.List {
		if r.Comparison != nil && r.Metric == "lcp" && r.Device == "mobile" {
			c, regID = r.Comparison, r.ID
		}
	}
	if c == nil {
		t.Fatalf("the deploy's LCP regression on mobile does not link to a comparison: %+v", regs.Result.List)
	}
	type timing struct{ Start, End float64 }
	type frame struct{ Time float64 }
	var cmp struct {
		Metrics []struct {
			Name          string
			Base, Target  *float64
			Change        *float64
			ChangePercent *float64
		}
		Loads *struct {
			Requests []struct {
				Kind, URL    string
				Base, Target *timing
			}
			LCP struct {
				Base, Target *struct {
					Time     float64
					ImageURL string
				}
			}
			Filmstrip struct {
				BaseMarks, TargetMarks struct{ LCP *float64 }
				Slots                  []struct {
					Time         float64
					Base, Target *frame
				}
			}
		}
	}
	d.Call(t, "GET", c.Path, localtest.ViewerKey, "", 200, &cmp)
	if cmp.Loads == nil || len(cmp.Loads.Requests) == 0 {
		// The regression's ID starts with its first bad day: the deploy's is local.DemoDeployedDaysAgo.
		t.Fatalf("the comparison of %s (%+v) has no request that changed, want the hero grown: loads %+v", regID, *c, cmp.Loads)
	}
	var lcpChange *float64
	for _, m := range cmp.Metrics {
		if m.Name == "lcp" {
			lcpChange = m.Change
		}
	}
	l := cmp.Loads
	if lcpChange == nil || l.LCP.Target == nil || l.Filmstrip.BaseMarks.LCP == nil || l.Filmstrip.TargetMarks.LCP == nil {
		t.Fatalf("the comparison lacks the LCP's change (%v) or the loads' LCP marks (%+v)", lcpChange, l.Filmstrip)
	}
	v := deployView{change: *lcpChange, lcpBase: *l.Filmstrip.BaseMarks.LCP, lcpTarget: *l.Filmstrip.TargetMarks.LCP, shownBase: -1, shownTarget: -1}
	// When each filmstrip first shows its LCP element: the first frame at or after its LCP
	// mark (frames are captured as paints happen, a few ms apart).
	for _, sl := range l.Filmstrip.Slots {
		if sl.Base != nil && v.shownBase < 0 && sl.Base.Time >= v.lcpBase-10 {
			v.shownBase = sl.Base.Time
		}
		if sl.Target != nil && v.shownTarget < 0 && sl.Target.Time >= v.lcpTarget-10 {
			v.shownTarget = sl.Target.Time
		}
	}
	v.barBase, v.barTarget = -1, -1
	for _, r := range l.Requests {
		if r.URL == l.LCP.Target.ImageURL && r.Base != nil && r.Target != nil {
			v.barBase, v.barTarget = r.Base.End-r.Base.Start, r.Target.End-r.Target.Start
		}
	}
	if !strings.HasSuffix(l.LCP.Target.ImageURL, "/hero.png") {
		t.Errorf("the LCP element after the deploy paints %q, want the hero", l.LCP.Target.ImageURL)
	}
	if !v.check(t) {
		var frames []string
		for _, sl := range l.Filmstrip.Slots {
			f := func(fr *frame) string {
				if fr == nil {
					return "-"
				}
				return fmt.Sprintf("%.0f", fr.Time)
			}
			frames = append(frames, fmt.Sprintf("%.0f:%s/%s", sl.Time, f(sl.Base), f(sl.Target)))
		}
		t.Logf("LCP elements %+v → %+v; slots (time: base frame/target frame): %s", l.LCP.Base, l.LCP.Target, strings.Join(frames, " "))
	}

	b := launchBrowser(t)
	tb := d.signedIn(t, b, localtest.ViewerKey)

	// The deploy's incident (both devices' regressions) links to a comparison; the mobile
	// one is the view of the same days on mobile.
	tb.view("#/w/" + d.site.ID + "/regressions")
	tb.click("a.compare", "Compare "+c.Base+" with "+c.Target)
	tb.waitFor("the comparison", `() => document.querySelector('#main h1') && document.querySelector('#main h1').textContent.startsWith('Compare') && !document.getElementById('main').hasAttribute('aria-busy')`)
	tb.view("#/w/" + d.site.ID + "/compare?page=" + c.Page + "&device=mobile&base=" + c.Base + "&target=" + c.Target)
	tb.waitFor("the mobile comparison", `() => (document.querySelector('#main .sub') || {textContent: ''}).textContent.includes('mobile')`)
	tb.waitFor("the comparison", `() => document.querySelector('#main h1') && document.querySelector('#main h1').textContent.startsWith('Compare') && !document.getElementById('main').hasAttribute('aria-busy')`)
	if h1 := tb.text("#main h1"); h1 != "Compare "+c.Base+" with "+c.Target {
		t.Errorf("heading %q", h1)
	}
	view := tb.text("#main")
	for _, m := range cmp.Metrics {
		if m.Name != "lcp" || m.Change == nil {
			continue
		}
		sign := "+"
		if *m.Change < 0 {
			sign = "−"
		}
		if want := sign + uiNumber(math.Abs(*m.Change), "ms"); !strings.Contains(view, want) {
			t.Errorf("the view does not show LCP's change %s", want)
		}
	}
	for _, r := range cmp.Loads.Requests {
		shown := strings.TrimPrefix(strings.TrimPrefix(r.URL, "http://"), "https://")
		if len(shown) > 80 {
			shown = shown[:80]
		}
		if !strings.Contains(view, shown) {
			t.Errorf("the changed request %s (%s) is not listed", r.URL, r.Kind)
		}
	}
	tb.waitFor("the frames", `() => { const imgs = [...document.querySelectorAll('.cmp-film img')];
		return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0) }`)
	if n := tb.eval(`() => document.querySelectorAll('.cmp-film tbody tr').length`).(float64); n != 2 {
		t.Errorf("%v filmstrip rows, want the base's and the target's", n)
	}
	// The demo is measured with applied throttling: no note excuses the pictures.
	applied := strings.Contains(tb.text("#main .sub"), "applied throttling")
	if note := tb.eval(`() => document.querySelector('#main .method-note') !== null`); !applied || note != false {
		t.Errorf("the simulated-throttling note shown: %v, for a comparison subtitled %q: want applied throttling, no note", note, tb.text("#main .sub"))
	}
	tb.eval(`() => window.scrollTo(0, 0)`)
	tb.screenshot(shots, "compare")
	tb.narrow(shots, "compare", "")

	// The page view picks two days.
	tb.view("#/w/" + d.site.ID + "/page/" + c.Page + "?device=" + c.Device)
	tb.eval(`(a, b) => { document.getElementById('cmp-base').value = a; document.getElementById('cmp-target').value = b; }`, c.Base, c.Target)
	tb.click("#compare-picker button", "Compare")
	tb.waitFor("the comparison from the page", `() => document.querySelector('#main h1').textContent.startsWith('Compare') && !document.getElementById('main').hasAttribute('aria-busy')`)
	if h1 := tb.text("#main h1"); h1 != "Compare "+c.Base+" with "+c.Target {
		t.Errorf("heading from the page view %q", h1)
	}

	// A day without a result: the problem in place of the view.
	tb.view("#/w/" + d.site.ID + "/compare?page=" + c.Page + "&device=" + c.Device + "&base=2001-01-01&target=" + c.Target)
	if h1, p := tb.text("#main h1"), tb.text("#main .error"); h1 != "Not found" || !strings.Contains(p, "2001-01-01") {
		t.Errorf("an unknown day: %q, %q", h1, p)
	}
}

// deployView is what a comparison shows of the deploy: the LCP's change (ms), both loads'
// LCP marks, when each filmstrip first shows its LCP element, and the LCP image's waterfall
// bar (its request's duration) in each load (-1: not shown).
type deployView struct {
	change, lcpBase, lcpTarget, shownBase, shownTarget, barBase, barTarget float64
}

// check checks that the pictures show the change: the LCP marks differ by it (within 10 %), the second filmstrip shows the LCP element later by at least half of it, and the
// image's bar grows by between half and one and a half times as much.
func (v deployView) check(t *testing.T) bool {
	t.Helper()
	ok := true
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		ok = false
	}
	t.Logf("LCP %.0f → %.0f ms (change %.0f ms); hero shown at %.0f → %.0f ms; hero bar %.0f → %.0f ms",
		v.lcpBase, v.lcpTarget, v.change, v.shownBase, v.shownTarget, v.barBase, v.barTarget)
	if v.change < 300 {
		fail("the deploy's LCP change is %.0f ms: not a regression to see", v.change)
	}
	// The demo's days are shaped on one real audit before the deploy and one after, their
	// values moved by up to 4 % a day: the days' change is the loads' within 10 %.
	if diff := (v.lcpTarget - v.lcpBase) - v.change; math.Abs(diff) > 0.1*v.change {
		fail("the loads' LCP marks differ by %.0f ms, the metric by %.0f ms", v.lcpTarget-v.lcpBase, v.change)
	}
	if v.shownBase < 0 || v.shownTarget < 0 || v.shownTarget-v.shownBase < v.change/2 {
		fail("the hero appears at %.0f ms in the second filmstrip, %.0f ms in the first: want later by about %.0f ms", v.shownTarget, v.shownBase, v.change)
	}
	if grew := v.barTarget - v.barBase; v.barBase < 0 || grew < v.change/2 || grew > v.change*1.5 {
		fail("the hero's bar grew by %.0f ms (%.0f → %.0f), the LCP by %.0f ms: want roughly as much", grew, v.barBase, v.barTarget, v.change)
	}
	return ok
}
