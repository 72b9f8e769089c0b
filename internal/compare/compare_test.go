package compare

import (
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

func ptr(v float64) *float64 { return &v }

func TestRequestKey(t *testing.T) {
	same := [][2]string{
		{"https://cdn.example.com/app.3f9a2c1b.js", "https://cdn.example.com/app.a81b0c2d.js"},
		{"https://Example.com:443/x.css?b=2&a=1", "https://example.com/x.css?a=1&b=2"},
		{"https://example.com/x.js?v=123&utm_source=mail", "https://example.com/x.js?v=456#top"},
		{"https://example.com/img/hero-0123456789abcdef.webp", "https://example.com/img/hero-fedcba9876543210.webp"},
	}
	for _, p := range same {
		if a, b := RequestKey(p[0]), RequestKey(p[1]); a != b {
			t.Errorf("%s and %s: keys %s and %s, want one", p[0], p[1], a, b)
		}
	}
	different := [][2]string{
		{"https://example.com/x.js?page=1", "https://example.com/x.js?page=2"},
		{"https://example.com/a.js", "https://example.com/b.js"},
		{"https://a.example.com/x.js", "https://b.example.com/x.js"},
		{"https://example.com/checkout.js", "https://example.com/checkout2.js"},
	}
	for _, p := range different {
		if RequestKey(p[0]) == RequestKey(p[1]) {
			t.Errorf("%s and %s have one key %s", p[0], p[1], RequestKey(p[0]))
		}
	}
}

// TestCompareLoads: a script added, an image grown, a stylesheet slowed, a font removed, a
// hashed bundle matched across builds; the LCP element and its render delay changed; a new
// layout shift; the filmstrips on one axis.
func TestCompareLoads(t *testing.T) {
	req := func(u string, start, end float64, size int64) model.Request {
		return model.Request{URL: u, Start: start, End: end, TransferSize: size, Type: "Script", Status: 200}
	}
	base := &model.Diagnostics{
		Filmstrip: []model.Frame{{Time: 300, Image: "b0"}, {Time: 900, Image: "b1"}, {Time: 1400, Image: "b2"}},
		Marks:     model.Marks{FCP: ptr(900), LCP: ptr(1400)},
		Requests: []model.Request{
			req("https://example.com/", 0, 200, 10000),
			req("https://example.com/app.11111111.js", 210, 400, 50000),
			req("https://example.com/hero.jpg", 300, 800, 100000),
			req("https://example.com/style.css", 210, 300, 8000),
			req("https://example.com/font.woff2", 400, 600, 20000),
			req("https://example.com/pixel.gif?t=1", 500, 520, 40),
		},
		LCP:    &model.LCP{Time: 1400, Selector: "h1", Snippet: "<h1>", Phases: model.LCPPhases{TTFB: 200, RenderDelay: 1200}},
		Shifts: []model.LayoutShift{{Time: 1000, Score: 0.01, Elements: []model.Element{{Selector: "footer"}}}},
	}
	target := &model.Diagnostics{
		Filmstrip: []model.Frame{{Time: 300, Image: "t0"}, {Time: 1300, Image: "t1"}, {Time: 2300, Image: "t2"}},
		Marks:     model.Marks{FCP: ptr(1300), LCP: ptr(2300)},
		Requests: []model.Request{
			req("https://example.com/", 0, 210, 10100),
			req("https://cdn.example.com/big.js", 210, 900, 312*1024),
			req("https://example.com/app.22222222.js", 210, 410, 50500),
			req("https://example.com/hero.jpg", 300, 1000, 300000),
			req("https://example.com/style.css", 210, 600, 8000),
			req("https://example.com/pixel.gif?t=2", 500, 530, 40),
			// Blocked (no answer): as good as absent, so the font counts as removed.
			{URL: "https://example.com/font.woff2", Start: 400, End: 401, Type: "Font", Status: -1},
		},
		LCP: &model.LCP{Time: 2300, Selector: "img.hero", Snippet: `<img class="hero">`, ImageURL: "https://example.com/hero.jpg",
			Phases: model.LCPPhases{TTFB: 210, LoadDelay: ptr(90), LoadDuration: ptr(700), RenderDelay: 1300}},
		Shifts: []model.LayoutShift{
			{Time: 1000, Score: 0.012, Elements: []model.Element{{Selector: "footer"}}},
			{Time: 1500, Score: 0.2, Elements: []model.Element{{Selector: "p.intro"}}},
		},
	}
	l := CompareLoads(base, target, DefaultThresholds)
	var got []string
	for _, c := range l.Requests {
		got = append(got, c.Kind+" "+c.Request().URL)
	}
	want := []string{
		"added https://cdn.example.com/big.js",
		"grew https://example.com/hero.jpg",
		"slowed https://example.com/style.css",
		"removed https://example.com/font.woff2",
	}
	if len(got) != len(want) {
		t.Fatalf("changes %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d: %s, want %s", i, got[i], want[i])
		}
	}
	if l.Unchanged != 3 {
		t.Errorf("%d unchanged, want 3 (document, bundle, pixel)", l.Unchanged)
	}
	if c := l.Requests[0]; c.SizeDelta != 312*1024 || c.Base != nil {
		t.Errorf("added: %+v", c)
	}

	if !l.LCP.ElementChanged || len(l.LCP.Phases) != 3 {
		t.Fatalf("LCP %+v: want the element changed, load delay and duration new, render delay +100", l.LCP)
	}
	if p := l.LCP.Phases[2]; p.Name != "renderDelay" || p.Delta != 100 {
		t.Errorf("render delay %+v", p)
	}
	if len(l.Shifts) != 1 || l.Shifts[0].Key != "p.intro" || l.Shifts[0].BaseScore != 0 {
		t.Errorf("shifts %+v: want the paragraph's, new", l.Shifts)
	}

	f := l.Filmstrip
	if f.Step != 100 || f.End != 2300 || len(f.Slots) != 24 {
		t.Fatalf("filmstrip step %v end %v slots %d", f.Step, f.End, len(f.Slots))
	}
	at := func(ms float64) Slot { return f.Slots[int(ms/f.Step)] }
	if s := at(200); s.Base != nil || s.Target != nil {
		t.Errorf("at 200 ms: %+v, want nothing painted", s)
	}
	if s := at(1000); s.Base.Image != "b1" || s.Target.Image != "t0" || s.BaseChanged || s.TargetChanged {
		t.Errorf("at 1000 ms: %+v", s)
	}
	if s := at(1400); s.Base.Image != "b2" || !s.BaseChanged || s.Target.Image != "t1" {
		t.Errorf("at 1400 ms: %+v", s)
	}
	if s := at(2300); s.Base.Image != "b2" || s.Target.Image != "t2" || !s.TargetChanged {
		t.Errorf("at 2300 ms: %+v", s)
	}
}

func TestFilmstripStepGrows(t *testing.T) {
	long := &model.Diagnostics{Filmstrip: []model.Frame{{Time: 500}, {Time: 19000}}}
	f := AlignFilmstrips(&model.Diagnostics{}, long)
	if f.Step != 500 || len(f.Slots) != 39 || f.Slots[0].Target != nil || f.Slots[38].Target.Time != 19000 {
		t.Errorf("step %v, %d slots", f.Step, len(f.Slots))
	}
	if f := AlignFilmstrips(&model.Diagnostics{}, &model.Diagnostics{}); len(f.Slots) != 0 {
		t.Errorf("no frames: %d slots", len(f.Slots))
	}
}

func TestMetrics(t *testing.T) {
	base := Audit{Metrics: map[string]float64{"lcp": 2000, "cls": 0}, Samples: map[string][]float64{"lcp": {1900, 2000, 2100, 2050}}}
	target := Audit{Metrics: map[string]float64{"lcp": 2050, "cls": 0.1}, Samples: map[string][]float64{"lcp": {1950, 2050, 2150}}}
	ms := Metrics(base, target, []string{"lcp", "fcp"})
	if len(ms) != 2 || ms[0].Name != "lcp" || ms[1].Name != "cls" {
		t.Fatalf("metrics %+v", ms)
	}
	if m := ms[0]; *m.Delta != 50 || *m.Percent != 2.5 || m.BeyondSpread || *m.TargetSpread != 100 {
		t.Errorf("lcp %+v: +50 within the spread", m)
	}
	if m := ms[1]; m.Percent != nil || *m.Delta != 0.1 || m.BeyondSpread {
		t.Errorf("cls %+v: no percentage of 0, no spread", m)
	}
}
