package journey

import (
	"testing"

	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/testing/browsertest"
)

// A journey through a single-page app routed by a real router: it loads the landing route,
// then each of three clicks on the app's links changes route without a document (a soft
// navigation), and on each route a click works for 150 ms. Each step that changed route
// reports its route's own vitals from Chromium's soft-navigation entries: its URL, its LCP
// element, the route's own interaction as its INP, and a layout shift on the about route only.
func TestSoftNavigationVitals(t *testing.T) {
	base := browsertest.SPAServer(t)
	click := func(sel string) step.Step { return step.Step{Type: "click", Target: sel} }
	appear := func(sel string) step.Step { return step.Step{Type: "waitForSelector", Target: sel} }
	pause := func(ms string) step.Step { return step.Step{Type: "wait", Value: ms} }
	// The pauses let each route and each click's result be painted before the next click, as
	// a person's would be: a route's heading is in the document (waitForSelector) before it is
	// painted, and an input before a route's first paint ends its LCP without one.
	res := run(t, options(t, base),
		navigate("/"), appear("#lcp-home"), click("#work-home"), pause("300"),
		click("#to-products"), appear("#lcp-products"), pause("300"), click("#work-products"), pause("300"),
		click("#to-product"), appear("#lcp-product"), pause("300"), click("#work-product"), pause("300"),
		click("#to-about"), appear("#lcp-about"), pause("1500"), click("#work-about"), pause("300"),
	)
	passed(t, res)
	for _, sn := range res.SoftNavigations {
		lcp, inp := -1.0, -1.0
		if sn.LCP != nil {
			lcp = *sn.LCP
		}
		if sn.INP != nil {
			inp = *sn.INP
		}
		t.Logf("step %d %s: LCP %.0f ms (%s), CLS %.4f, INP %.0f ms (%s)", sn.Step, sn.URL, lcp, sn.LCPElement, sn.CLS, inp, sn.INPTarget)
	}
	want := []struct {
		step        int
		path, route string
		shifted     bool
	}{{4, "/products", "products", false}, {9, "/product/123", "product", false}, {14, "/about", "about", true}}
	if len(res.SoftNavigations) != len(want) {
		t.Fatalf("%d soft navigations, want %d", len(res.SoftNavigations), len(want))
	}
	for i, w := range want {
		sn := res.SoftNavigations[i]
		if sn.Step != w.step || sn.URL != base+w.path {
			t.Errorf("soft navigation %d: step %d %s, want step %d %s", i, sn.Step, sn.URL, w.step, w.path)
		}
		if sn.LCP == nil || *sn.LCP <= 0 || sn.LCPElement != "#lcp-"+w.route {
			t.Errorf("%s: LCP %v element %q, want #lcp-%s", w.path, sn.LCP, sn.LCPElement, w.route)
		}
		// The route's own 150 ms click, not the quick click that left the route before it.
		if sn.INP == nil || *sn.INP < 150 || sn.INPTarget != "#work-"+w.route {
			t.Errorf("%s: INP %v target %q, want at least 150 ms on #work-%s", w.path, sn.INP, sn.INPTarget, w.route)
		}
		if (sn.CLS > 0) != w.shifted {
			t.Errorf("%s: CLS %v, want a shift: %v", w.path, sn.CLS, w.shifted)
		}
	}
}
