package api

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/model"
)

// TestComparisonJSON: the compared metrics and loads, answered from the compare package's own
// types, are byte for byte what the API answered (testdata/comparison.json, one line a case):
// names, order, nulls and empty lists.
func TestComparisonJSON(t *testing.T) {
	want, err := os.ReadFile("testdata/comparison.json")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(want), []byte("\n"))
	cases := comparedLoadsCases()
	if len(lines) != len(cases) {
		t.Fatalf("%d answers in testdata, %d cases", len(lines), len(cases))
	}
	for i, c := range cases {
		got, err := json.Marshal(struct {
			Metrics []compare.Metric `json:"metrics"`
			Loads   *loadsJSON       `json:"loads"`
		}{withUnits(compare.Metrics(c.audits[0], c.audits[1], []string{"lcp"})),
			toLoadsJSON(compare.CompareLoads(c.base, c.target, compare.DefaultThresholds), c.url, c.url)})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, lines[i]) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, lines[i])
		}
	}
}

// comparedLoadsCase is two audits whose comparison's answer is checked byte for byte.
type comparedLoadsCase struct {
	base, target *model.Diagnostics
	audits       [2]compare.Audit
	url          func(model.Frame) string
}

func comparedLoadsCases() []comparedLoadsCase {
	f := func(v float64) *float64 { return &v }
	url := func(fr model.Frame) string { return "/img/" + fr.Image }
	base := &model.Diagnostics{
		Filmstrip: []model.Frame{{Time: 300, Image: "b0"}, {Time: 900, Image: "b1"}},
		Marks:     model.Marks{FCP: f(900), LCP: f(900)},
		Requests: []model.Request{
			{URL: "https://example.com/", End: 200, TransferSize: 10000, Type: "Document", Status: 200},
			{URL: "https://example.com/hero.jpg", Start: 300, End: 800, TransferSize: 100000, Type: "Image", Status: 200},
			{URL: "https://example.com/old.js", Start: 300, End: 400, TransferSize: 3000, Type: "Script", Status: 200},
		},
		LCP:       &model.LCP{Time: 900, Selector: "h1", Snippet: "<h1>", Phases: model.LCPPhases{TTFB: 200, RenderDelay: 700}},
		Shifts:    []model.LayoutShift{{Time: 1000, Score: 0.01, Elements: []model.Element{{Selector: "footer"}}}},
		LongTasks: []model.LongTask{{URL: "https://example.com/app.js", Start: 400, Duration: 80}, {Start: 600, Duration: 55}},
	}
	target := &model.Diagnostics{
		Filmstrip: []model.Frame{{Time: 300, Image: "t0"}, {Time: 1300, Image: "t1"}},
		Marks:     model.Marks{FCP: f(1300), LCP: f(1300)},
		Requests: []model.Request{
			{URL: "https://example.com/", End: 210, TransferSize: 10100, Type: "Document", Status: 200},
			{URL: "https://cdn.example.com/big.js", Start: 210, End: 900, TransferSize: 300000, Type: "Script", Status: 200,
				ThirdParty: true, Entity: "CDN", RenderBlocking: true},
			{URL: "https://example.com/hero.jpg", Start: 300, End: 1000, TransferSize: 300000, Type: "Image", Status: 200},
		},
		LCP: &model.LCP{Time: 1300, Selector: "img.hero", Snippet: `<img class="hero">`, ImageURL: "https://example.com/hero.jpg",
			Phases: model.LCPPhases{TTFB: 210, LoadDelay: f(90), LoadDuration: f(700), RenderDelay: 300}},
		Shifts: []model.LayoutShift{
			{Time: 1500, Score: 0.2, Elements: []model.Element{{Selector: "p.intro"}}, Causes: []model.ShiftCause{{Kind: model.ShiftWebFont}}},
			{Time: 1600, Score: 0.05},
		},
		LongTasks: []model.LongTask{{URL: "https://example.com/app.js", Start: 400, Duration: 300}, {URL: "https://cdn.example.com/big.js", Start: 900, Duration: 120}},
	}
	audits := [2]compare.Audit{
		{Metrics: map[string]float64{"lcp": 900, "cls": 0.01, "custom": 0}, Samples: map[string][]float64{"lcp": {880, 900, 950}}},
		{Metrics: map[string]float64{"lcp": 1300, "cls": 0.25, "tbt": 40}, Samples: map[string][]float64{"lcp": {1250, 1300, 1320}}},
	}
	noLCP := *target
	noLCP.LCP, noLCP.LongTasks, noLCP.Filmstrip = nil, nil, nil
	return []comparedLoadsCase{
		{base: base, target: target, audits: audits, url: url},
		{base: base, target: &noLCP, audits: audits, url: func(model.Frame) string { return "" }},
	}
}
