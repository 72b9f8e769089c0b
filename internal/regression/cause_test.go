package regression

import (
	"strings"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

func ptr(v float64) *float64 { return &v }

// TestExplainLoads: a render-blocking script added, the LCP element and its render delay
// changed, the hero grown: the cause of an LCP regression names each, the script first (and
// not the long task no script is named for); that
// of a CLS regression names the new layout shift only.
func TestExplainLoads(t *testing.T) {
	before := &model.Diagnostics{
		Requests: []model.Request{
			{URL: "https://example.com/", Start: 0, End: 200, TransferSize: 10000, Type: "Document", Document: true},
			{URL: "https://example.com/hero.jpg", Start: 300, End: 800, TransferSize: 100000, Type: "Image", LCP: true},
			{URL: "https://example.com/old.css", Start: 210, End: 300, TransferSize: 3000, Type: "Stylesheet"},
		},
		LCP: &model.LCP{Time: 1400, Selector: "h1", Snippet: "<h1>", Phases: model.LCPPhases{TTFB: 200, RenderDelay: 1200}},
	}
	after := &model.Diagnostics{
		Requests: []model.Request{
			{URL: "https://example.com/", Start: 0, End: 210, TransferSize: 10100, Type: "Document", Document: true},
			{URL: "https://cdn.example.com/big.js", Start: 210, End: 900, TransferSize: 312 * 1024, Type: "Script", RenderBlocking: true, ThirdParty: true},
			{URL: "https://example.com/hero.jpg", Start: 900, End: 1600, TransferSize: 200000, Type: "Image", LCP: true},
		},
		LCP: &model.LCP{Time: 2300, Selector: "img.hero", ImageURL: "https://example.com/hero.jpg",
			Phases: model.LCPPhases{TTFB: 210, LoadDelay: ptr(690), LoadDuration: ptr(700), RenderDelay: 700}},
		Shifts:    []model.LayoutShift{{Time: 1500, Score: 0.2, Elements: []model.Element{{Selector: "p.intro"}}}},
		LongTasks: []model.LongTask{{URL: "https://cdn.example.com/big.js", Start: 900, Duration: 250}, {URL: "Unattributable", Start: 1200, Duration: 200}},
	}
	failing := newlyFailing([]model.Opportunity{{ID: "uses-long-cache-ttl", Category: "performance"}},
		[]model.Opportunity{{ID: "uses-long-cache-ttl", Category: "performance"}, {ID: "render-blocking-insight", Title: "Render-blocking requests", Category: "performance"}})
	items := ExplainLoads(before, after, "mobile", "lcp", failing)
	var titles []string
	for _, it := range items {
		titles = append(titles, it.Kind+": "+it.Title)
	}
	t.Logf("cause:\n%s", strings.Join(titles, "\n"))
	want := []string{
		"render_blocking_added: +312 KiB render-blocking script from cdn.example.com",
		"lcp_element: LCP element changed from h1 to img.hero",
		"lcp_phase: LCP load duration +700 ms",
		"lcp_phase: LCP load delay +690 ms",
		"lcp_resource: Image from example.com grew by 98 KiB",
		"long_task_added: Long tasks of cdn.example.com block the main thread 200 ms more",
		"resource_removed: Stylesheet from example.com was removed (2.9 KiB)",
		"audit_failing: Render-blocking requests (now failing)",
	}
	if len(titles) != len(want) {
		t.Fatalf("%d items, want %d", len(titles), len(want))
	}
	for i := range want {
		if titles[i] != want[i] {
			t.Errorf("item %d: %q, want %q", i, titles[i], want[i])
		}
	}
	if items[0].URL != "https://cdn.example.com/big.js" || items[0].Party != "third" || items[0].After != 312 || items[0].Impact <= items[1].Impact {
		t.Errorf("the script: %+v", items[0])
	}

	cls := ExplainLoads(before, after, "mobile", "cls", nil)
	if len(cls) != 2 || cls[0].Kind != "layout_shift" || cls[0].Title != "New layout shift of p.intro (0.200)" || cls[1].Kind != "resource_removed" {
		t.Errorf("CLS cause %+v", cls)
	}
}

// TestExplainLoadsResourceFirst: on a throttled desktop load the hero grew by 690 KiB and took
// 900 ms longer, more than the preset's estimate for its bytes (552 ms): its measured time is
// its effect, so the hero ranks first, before the load duration it caused.
func TestExplainLoadsResourceFirst(t *testing.T) {
	hero := "https://example.com/hero.png"
	before := &model.Diagnostics{
		Requests: []model.Request{{URL: hero, Start: 300, End: 400, TransferSize: 5 * 1024, Type: "Image", LCP: true}},
		LCP:      &model.LCP{Time: 500, ImageURL: hero, Phases: model.LCPPhases{TTFB: 200, LoadDelay: ptr(100), LoadDuration: ptr(100), RenderDelay: 100}},
	}
	after := &model.Diagnostics{
		Requests: []model.Request{{URL: hero, Start: 300, End: 1300, TransferSize: 695 * 1024, Type: "Image", LCP: true}},
		LCP:      &model.LCP{Time: 1400, ImageURL: hero, Phases: model.LCPPhases{TTFB: 200, LoadDelay: ptr(100), LoadDuration: ptr(1000), RenderDelay: 100}},
	}
	items := ExplainLoads(before, after, "desktop", "lcp", nil)
	if len(items) != 2 || items[0].Kind != "lcp_resource" || items[0].URL != hero || items[1].Kind != "lcp_phase" || items[1].URL != "loadDuration" {
		t.Fatalf("cause %+v: want the hero, then its load duration", items)
	}
	if items[0].Impact < 900 {
		t.Errorf("the hero's impact %v, want its measured 900 ms", items[0].Impact)
	}

	// The trace's load duration grew by more than the request's own times (850 ms): the
	// phase is still the hero's effect, and the hero still ranks first.
	after.Requests[0].End = 1250
	items = ExplainLoads(before, after, "desktop", "lcp", nil)
	if len(items) != 2 || items[0].Kind != "lcp_resource" || items[1].Kind != "lcp_phase" || items[0].Impact < items[1].Impact {
		t.Fatalf("cause %+v: want the hero, then its load duration", items)
	}
}

// TestExplainLoadsScripts: a script whose main-thread time grew without a long task of its own
// is the cause of a TBT regression (the scripts' times read from the diagnostics); work no
// script is named for is not, and diagnostics stored before the scripts were kept compare
// none.
func TestExplainLoadsScripts(t *testing.T) {
	before := &model.Diagnostics{Scripts: []model.ScriptTime{{URL: "https://example.com/app.js", MainThread: 100}, {URL: "Unattributable", MainThread: 50}}}
	after := &model.Diagnostics{Scripts: []model.ScriptTime{{URL: "https://example.com/app.js", MainThread: 340}, {URL: "Unattributable", MainThread: 400}}}
	items := ExplainLoads(before, after, "desktop", "tbt", nil)
	if len(items) != 1 || items[0].Kind != "script_main_thread" || items[0].URL != "https://example.com/app.js" ||
		items[0].Before != 100 || items[0].After != 340 || items[0].Impact != 240 ||
		items[0].Title != "Main-thread time of a script from example.com grew by 240 ms" {
		t.Errorf("TBT cause %+v", items)
	}
	if old := ExplainLoads(&model.Diagnostics{}, after, "desktop", "tbt", nil); len(old) != 0 {
		t.Errorf("cause against diagnostics without scripts %+v, want none", old)
	}
}
