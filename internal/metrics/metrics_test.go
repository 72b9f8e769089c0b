package metrics

import (
	"reflect"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

func TestRound(t *testing.T) {
	for _, tc := range []struct {
		field string
		in    float64
		want  float64
	}{
		{"lcp", 2400.5, 2401},
		{"lcp", 2400.49, 2400},
		{"ttfb", 80.6, 81},
		{"cls", 0.12345, 0.1235},
		{"ux_cls", 0.06666, 0.0667},
		{"CTR", 5.254, 5.25},
		{"performance_score", 92.5, 93},
		{"ux_lcp", 2433.33, 2433},
	} {
		if got := Round(tc.field, tc.in); got != tc.want {
			t.Errorf("Round(%s, %v) = %v, want %v", tc.field, tc.in, got, tc.want)
		}
	}
}

func TestValuesOfOneResult(t *testing.T) {
	vital := func(p75 float64) model.Vital { return model.Vital{P75: p75} }
	for _, tc := range []struct {
		name string
		got  Values
		want Values
	}{
		{"lab: rounded, with the opportunity count, unmeasured fields absent",
			LabValues(model.LabResult{Metrics: map[string]float64{"lcp": 2400.4, "cls": 0.123456}, Opportunities: []model.Opportunity{{ID: "a"}, {ID: "b"}}}),
			Values{"lcp": 2400, "cls": 0.1235, "opportunities": 2, MethodField: 0}},
		{"lab without opportunities", LabValues(model.LabResult{}), Values{"opportunities": 0, MethodField: 0}},
		{"lab by applied throttling", LabValues(model.LabResult{Method: model.MethodApplied}), Values{"opportunities": 0, MethodField: 1}},
		{"ux: the dataset's vitals as ux_* fields; fid and unknown vitals dropped",
			UXValues(model.UXResult{Vitals: map[string]model.Vital{"lcp": vital(2400.6), "cls": vital(0.051234), "fid": vital(12), "fp": vital(900)}}),
			Values{"ux_lcp": 2401, "ux_cls": 0.0512}},
		{"search: CTR in percent, rounded position",
			SearchValues(model.SearchResult{Impressions: 1200, Clicks: 66, Position: 2.6}),
			Values{"impressions": 1200, "clicks": 66, "CTR": 5.5, "position": 3}},
		{"search without impressions: neither CTR nor position",
			SearchValues(model.SearchResult{Clicks: 0, Position: 4}),
			Values{"impressions": 0, "clicks": 0}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestLatest(t *testing.T) {
	for _, tc := range []struct {
		name string
		days []Values
		want Values
	}{
		{"no day", nil, nil},
		{"one day", []Values{{"lcp": 2000}}, Values{"lcp": 2000}},
		{"the last 3 of 5 days", []Values{{"lcp": 9000}, {"lcp": 9000}, {"lcp": 2500}, {"lcp": 2400}, {"lcp": 2300}}, Values{"lcp": 2400}},
		{"each field over the days that have it", []Values{{"lcp": 1000, "tbt": 90}, {"lcp": 2000}, {"lcp": 3000, "tbt": 110}}, Values{"lcp": 2000, "tbt": 100}},
		{"a field only outside the last 3 days is absent", []Values{{"tbt": 100}, {"lcp": 1}, {"lcp": 2}, {"lcp": 3}}, Values{"lcp": 2}},
		{"means rounded as shown", []Values{{"lcp": 1}, {"lcp": 2}, {"lcp": 2}}, Values{"lcp": 2}},
		{"cls to four decimals", []Values{{"cls": 0.1}, {"cls": 0.2}, {"cls": 0.2}}, Values{"cls": 0.1667}},
		{"the newest method's days only: a switch starts a new level", []Values{{"lcp": 9000, MethodField: 0}, {"lcp": 2000, MethodField: 1}, {"lcp": 2200, MethodField: 1}},
			Values{"lcp": 2100, MethodField: 1}},
	} {
		if got := Latest(tc.days); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	if LatestLab(nil) != nil {
		t.Error("LatestLab without results: want nil")
	}
}

func TestAssess(t *testing.T) {
	for _, tc := range []struct {
		name             string
		vals             Values
		passed, assessed bool
	}{
		{"all good", Values{"ux_lcp": 2000, "ux_inp": 150, "ux_cls": 0.05}, true, true},
		{"on the thresholds", Values{"ux_lcp": 2500, "ux_inp": 200, "ux_cls": 0.1}, true, true},
		{"lcp poor", Values{"ux_lcp": 2501, "ux_inp": 150, "ux_cls": 0.05}, false, true},
		{"inp poor", Values{"ux_lcp": 2000, "ux_inp": 201, "ux_cls": 0.05}, false, true},
		{"cls poor", Values{"ux_lcp": 2000, "ux_inp": 150, "ux_cls": 0.1001}, false, true},
		{"no inp: lcp and cls decide", Values{"ux_lcp": 2400, "ux_cls": 0.05}, true, true},
		{"no inp, lcp poor", Values{"ux_lcp": 2600, "ux_cls": 0.07}, false, true},
		{"no lcp: no assessment", Values{"ux_inp": 100, "ux_cls": 0.05}, false, false},
		{"no cls: no assessment", Values{"ux_lcp": 1000, "ux_inp": 100}, false, false},
		{"lab values do not count", Values{"lcp": 1000, "cls": 0}, false, false},
	} {
		passed, ok := Assess(tc.vals.Get)
		if passed != tc.passed || ok != tc.assessed {
			t.Errorf("%s: passed %v assessed %v, want %v %v", tc.name, passed, ok, tc.passed, tc.assessed)
		}
	}
}

// series is home on mobile: lab results on days 3 and 5, user-experience records on days 1, 2,
// 3 and 5 (none on 4), search analytics on days 4 and 5.
func series() Series {
	lab := func(day string, lcp float64) model.LabResult {
		return model.LabResult{Day: day, Metrics: map[string]float64{"lcp": lcp}}
	}
	ux := func(day string, p75 float64) model.UXResult {
		return model.UXResult{Day: day, Vitals: map[string]model.Vital{"lcp": {P75: p75}, "cls": {P75: 0.05}}}
	}
	return Series{
		Page:   model.Page{ID: "home", URL: "/", Alias: "Home"},
		Device: "mobile",
		Lab:    []model.LabResult{lab("20261103", 3000), lab("20261105", 4000)},
		UX:     []model.UXResult{ux("20261101", 9000), ux("20261102", 2000), ux("20261103", 2400), ux("20261105", 2600)},
		Search: []model.SearchResult{{Day: "20261104", Impressions: 100, Clicks: 5}, {Day: "20261105", Impressions: 300, Clicks: 15}},
	}
}

func TestDays(t *testing.T) {
	days := series().Listing().Days()
	var got []string
	for _, d := range days {
		got = append(got, d.Day)
	}
	want := []string{"20261101", "20261102", "20261103", "20261104", "20261105"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("days %q, want %q", got, want)
	}
	if v := days[4].Values; !reflect.DeepEqual(v, Values{"lcp": 4000, "opportunities": 0, MethodField: 0, "ux_lcp": 2600, "ux_cls": 0.05,
		"impressions": 300, "clicks": 15, "CTR": 5, "position": 0}) {
		t.Errorf("values of a day with everything: %v", v)
	}
	if v := days[3].Values; len(v) != 4 || v["impressions"] != 100 {
		t.Errorf("values of a day with search analytics only: %v", v)
	}
	if v := days[0].Values; len(v) != 2 || v["ux_lcp"] != 9000 {
		t.Errorf("values of a day with a user-experience record only: %v (no opportunities without a lab result)", v)
	}
	if len((Series{}).Listing().Days()) != 0 {
		t.Error("an empty series has days")
	}
}

func TestSeriesLatest(t *testing.T) {
	// Each family is averaged over its own last 3 days present: lab over 2, ux over days 2, 3
	// and 5, search over 2.
	want := Values{"lcp": 3500, "opportunities": 0, MethodField: 0, "ux_lcp": 2333, "ux_cls": 0.05, "impressions": 200, "clicks": 10, "CTR": 5, "position": 0}
	if got := series().Latest(); !reflect.DeepEqual(got, want) {
		t.Errorf("latest %v, want %v", got, want)
	}
	if got := (Series{Page: model.Page{ID: "p"}, Device: "desktop"}).Latest(); got != nil {
		t.Errorf("latest of an empty series %v, want nil", got)
	}
	uxOnly := Series{UX: series().UX}
	if got := uxOnly.Latest(); len(got) != 2 || got["ux_lcp"] != 2333 {
		t.Errorf("latest without lab results %v: ux fields only, no opportunities", got)
	}
}

func TestLatestUX(t *testing.T) {
	v := func(p75, good, ni, poor float64) model.Vital {
		return model.Vital{P75: p75, Good: good, NeedsImprovement: ni, Poor: poor}
	}
	rs := []model.UXResult{
		{Day: "20261101", Vitals: map[string]model.Vital{"lcp": v(9000, 0, 0, 100), "inp": v(900, 0, 0, 100), "cls": v(0.5, 0, 0, 100)}},
		{Day: "20261102", Vitals: map[string]model.Vital{"lcp": v(2400, 80, 15, 5), "inp": v(180, 85, 10, 5), "cls": v(0.05, 90, 6, 4), "fid": v(5, 100, 0, 0)}},
		{Day: "20261103", Vitals: map[string]model.Vital{"lcp": v(2600, 70, 20, 10), "cls": v(0.07, 88, 8, 4)}},
		{Day: "20261104", Vitals: map[string]model.Vital{"lcp": v(2300, 84, 11, 5), "inp": v(190, 86, 9, 5), "cls": v(0.06, 89, 7, 4)}},
	}
	got := LatestUX(rs)
	want := &UXSummary{Vitals: map[string]VitalSummary{
		"lcp": {P75: 2433, Good: 78, NeedsImprovement: 15.33, Poor: 6.67},
		"inp": {P75: 185, Good: 85.5, NeedsImprovement: 9.5, Poor: 5},
		"cls": {P75: 0.06, Good: 89, NeedsImprovement: 7, Poor: 4},
	}}
	if got == nil || !reflect.DeepEqual(got.Vitals, want.Vitals) {
		t.Fatalf("latest ux %+v, want %+v: the last 3 records, each vital over the records that have it, no fid", got, want)
	}
	if got.Passed == nil || !*got.Passed {
		t.Errorf("passed %v, want true: 2433, 185 and 0.06 are good", got.Passed)
	}
	if LatestUX(nil) != nil {
		t.Error("latest ux without a record: want nil")
	}
	noLCP := LatestUX([]model.UXResult{{Vitals: map[string]model.Vital{"inp": v(100, 90, 5, 5)}}})
	if noLCP == nil || noLCP.Passed != nil || len(noLCP.Vitals) != 1 {
		t.Errorf("a record without LCP %+v: inp only, no assessment", noLCP)
	}
	poor := LatestUX([]model.UXResult{{Vitals: map[string]model.Vital{"lcp": v(4000, 10, 20, 70), "cls": v(0.01, 99, 1, 0)}}})
	if poor.Passed == nil || *poor.Passed {
		t.Errorf("poor LCP assessed %v, want false", poor.Passed)
	}
}

func TestOpportunities(t *testing.T) {
	opp := func(id string, lcp float64) model.Opportunity {
		o := model.Opportunity{ID: id, Category: "performance"}
		if lcp > 0 {
			o.MetricSavings, o.SavingsMs = map[string]float64{"LCP": lcp, "FCP": 0}, lcp
		}
		return o
	}
	home, pricing := model.Page{ID: "home", Alias: "Home"}, model.Page{ID: "pricing", Alias: "Pricing"}
	a11y := model.Opportunity{ID: "color-contrast", Category: "accessibility"}
	seo := model.Opportunity{ID: "meta-description", Category: "seo"}
	fonts := opp("fonts", 0)
	fonts.SavingsBytes = 2048
	got := opportunities([]Listing{
		{Page: home, Device: "desktop", Opportunities: []model.Opportunity{opp("images", 500), fonts, seo, a11y}},
		{Page: home, Device: "mobile"},
		{Page: pricing, Device: "mobile", Opportunities: []model.Opportunity{opp("images", 1000), opp("render", 1000)}},
	}, map[string]model.SeenOpportunity{"images": {FirstSeen: "20261020", OpportunityText: model.OpportunityText{Title: "Images", Category: "performance", Description: "About images"}}})
	var ids []string
	for _, o := range got {
		ids = append(ids, o.ID)
	}
	// images saves 1,500 ms of LCP over two pages (impact 25 x 1500/2500 = 15), render 1,000
	// (10); fonts saves bytes only; then accessibility before SEO.
	if want := []string{"images", "render", "fonts", "color-contrast", "meta-description"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("ranked %v, want %v", ids, want)
	}
	images := got[0]
	wantStart := time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)
	if images.Title != "Images" || images.Description != "About images" || !images.FirstSeen.Equal(wantStart) ||
		images.Impact != 15 || images.SavingsMs != 1500 || images.MetricSavings["LCP"] != 1500 || len(images.Pages) != 2 ||
		images.Pages[0].PageDevice != (PageDevice{home, "desktop"}) || images.Pages[0].Impact != 5 || images.Pages[1].PageDevice != (PageDevice{pricing, "mobile"}) {
		t.Errorf("images %+v: the seen texts and first day, savings summed over both pages in order", images)
	}
	if f := got[2]; !f.FirstSeen.IsZero() || f.Title != "" || f.Category != "performance" || f.SavingsBytes != 2048 {
		t.Errorf("fonts %+v: no first day nor texts recorded, the listing's category, its bytes", f)
	}
	if got := opportunities(nil, nil); len(got) != 0 {
		t.Errorf("no listing: %v, want none", got)
	}
}

func TestImpact(t *testing.T) {
	for _, tc := range []struct {
		savings map[string]float64
		want    float64
	}{
		{nil, 0},
		{map[string]float64{"LCP": 500}, 5},
		{map[string]float64{"CLS": 0.05}, 12.5},
		{map[string]float64{"TBT": 100, "FCP": 180}, 16},
		{map[string]float64{"INP": 200, "SI": 1000}, 30}, // no weight for what is not a metric saving
	} {
		if got := Impact(model.Opportunity{MetricSavings: tc.savings}); got != tc.want {
			t.Errorf("Impact(%v) = %v, want %v", tc.savings, got, tc.want)
		}
	}
	opps := []model.Opportunity{{ID: "b", Category: "seo"}, {ID: "a", Category: "seo"}, {ID: "x", Category: "best_practices"},
		{ID: "big", Category: "performance", SavingsBytes: 10}, {ID: "cls", Category: "performance", MetricSavings: map[string]float64{"CLS": 0.01}}}
	Rank(opps)
	var ids []string
	for _, o := range opps {
		ids = append(ids, o.ID)
	}
	if want := []string{"cls", "big", "x", "a", "b"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("Rank: %v, want %v", ids, want)
	}
}
