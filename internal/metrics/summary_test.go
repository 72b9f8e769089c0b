package metrics

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/openvitals/openvitals/internal/model"
)

func TestSummaryRoundTrip(t *testing.T) {
	home := model.Page{ID: "home", URL: "/", Alias: "Home"}
	mobile := series()
	desktop := Series{Page: home, Device: "desktop", Search: mobile.Search,
		Lab: []model.LabResult{{Day: "20261102", Metrics: map[string]float64{"cls": 0.12345, "bytes_total": 1_234_567_890_123, "tbt": 0},
			Opportunities: make([]model.Opportunity, 7)}}}
	listings := []Listing{mobile.Listing(), desktop.Listing()} // any order in, Devices order out
	b, err := EncodeSummary(listings)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, from string
		want       []Listing
	}{
		{"every day", "20261101", []Listing{desktop.Listing(), mobile.Listing()}},
		{"from the window's start", "20261103", []Listing{
			{Page: home, Device: "desktop", Search: mobile.Listing().Search},
			{Page: home, Device: "mobile", Lab: mobile.Listing().Lab, UX: NewSection(mobile.Listing().UX.Dated()[2:]), Search: mobile.Listing().Search},
		}},
		{"nothing in the window", "20261201", []Listing{{Page: home, Device: "desktop"}, {Page: home, Device: "mobile"}}},
	} {
		got, err := DecodeSummary(home, b, tc.from)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !sameListings(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
	got, _ := DecodeSummary(home, b, "20261101")
	if v := got[0].Lab.Dated()[0].Values; v["cls"] != 0.1235 || v["opportunities"] != 7 {
		t.Errorf("cls rounded to 4 decimals and the opportunities counted: %v", v)
	}
}

// TestSummaryOpportunities: a page's opportunities beside its summary are each device's latest
// with their savings, without their texts, dropped when their result is before the window.
func TestSummaryOpportunities(t *testing.T) {
	home := model.Page{ID: "home", URL: "/"}
	opps := []model.Opportunity{
		{ID: "cls-culprits-insight", Title: "Layout shift culprits", Category: "performance", Description: "d", DisplayValue: "v",
			MetricSavings: map[string]float64{"CLS": 0.2153}},
		{ID: "render-blocking-insight", Category: "performance", SavingsMs: 300, SavingsBytes: 1200, MetricSavings: map[string]float64{"FCP": 300, "LCP": 0}},
		{ID: "color-contrast", Category: "accessibility"},
		{ID: "meta-description", Category: "seo"},
	}
	mobile := Series{Page: home, Device: "mobile", Lab: []model.LabResult{
		{Day: "20261101", Metrics: map[string]float64{"lcp": 1}, Opportunities: opps[3:]},
		{Day: "20261102", Metrics: map[string]float64{"lcp": 2}, Opportunities: opps}}}
	b, err := EncodeOpportunities([]Listing{mobile.Listing()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeOpportunities(home, b, "20261102")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]model.Opportunity, len(opps))
	for i, o := range opps {
		want[i] = model.Opportunity{ID: o.ID, Category: o.Category, SavingsMs: o.SavingsMs, SavingsBytes: o.SavingsBytes, MetricSavings: o.MetricSavings}
	}
	if got[0].Opportunities != nil || !reflect.DeepEqual(got[1].Opportunities, want) {
		t.Errorf("opportunities: desktop %+v, mobile %+v; want none and %+v", got[0].Opportunities, got[1].Opportunities, want)
	}
	if got, _ := DecodeOpportunities(home, b, "20261103"); got[1].Opportunities != nil {
		t.Errorf("a result before the window: %+v", got[1].Opportunities)
	}
}

// sameListings compares listings by their pages, devices and values by day.
func sameListings(a, b []Listing) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Page != b[i].Page || a[i].Device != b[i].Device {
			return false
		}
		for _, pair := range [][2]Section{{a[i].Lab, b[i].Lab}, {a[i].UX, b[i].UX}, {a[i].Search, b[i].Search}} {
			x, y := pair[0].Dated(), pair[1].Dated()
			if len(x) != len(y) || (len(x) > 0 && !reflect.DeepEqual(x, y)) {
				return false
			}
		}
	}
	return true
}

// TestSummaryMatchesResults encodes random listings, as a month of real results gives them,
// and decodes the same values.
func TestSummaryMatchesResults(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	fields := []string{"fcp", "lcp", "cls", "performance_score", "bytes_js", "opportunities"}
	for round := range 200 {
		var ls []Listing
		for _, device := range Devices {
			l := Listing{Page: model.Page{ID: "p"}, Device: device}
			var lab []Dated
			for day := 1; day <= 30; day++ {
				if rng.IntN(4) == 0 {
					continue // no audit that day
				}
				vals := Values{}
				for _, f := range fields {
					if rng.IntN(10) > 0 {
						vals[f] = Round(f, rng.Float64()*float64(rng.IntN(1_000_000)))
					}
				}
				lab = append(lab, Dated{"202611" + pad(day), vals})
			}
			l.Lab = NewSection(lab)
			ls = append(ls, l)
		}
		b, err := EncodeSummary(ls)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeSummary(model.Page{ID: "p"}, b, "20261101")
		if err != nil {
			t.Fatal(err)
		}
		if !sameListings(got, ls) {
			t.Fatalf("round %d: decoded\n%+v\nwant\n%+v", round, got, ls)
		}
		// LatestValue, read from the columns, is Latest, built as maps.
		for i := range got {
			l := &got[i]
			latest := l.Latest()
			if l.Empty() != (latest == nil) {
				t.Fatalf("round %d: Empty %v with Latest %v", round, l.Empty(), latest)
			}
			for _, f := range append(fields, "ux_lcp") {
				v, ok := l.LatestValue(l.Field(f))
				if w, wok := latest.Get(f); ok != wok || v != w {
					t.Fatalf("round %d: LatestValue(%s) = %v %v, Latest has %v %v", round, f, v, ok, w, wok)
				}
			}
		}
	}
}

func pad(day int) string {
	s := strconv.Itoa(day)
	if len(s) == 1 {
		return "0" + s
	}
	return s
}

func TestSummaryRefused(t *testing.T) {
	b, err := EncodeSummary([]Listing{series().Listing()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"none", nil},
		{"another format", append([]byte{summaryFormat + 1}, b[1:]...)},
		{"truncated", b[:len(b)-1]},
		{"truncated early", b[:4]},
	} {
		if _, err := DecodeSummary(model.Page{}, tc.b, "20261101"); err == nil {
			t.Errorf("%s: decoded", tc.name)
		} else if tc.name != "truncated" && tc.name != "truncated early" && !errors.Is(err, errSummaryFormat) {
			t.Errorf("%s: %v, want errSummaryFormat", tc.name, err)
		}
	}
	if _, err := EncodeSummary([]Listing{{Device: "mobile", Lab: NewSection([]Dated{{"20261102", nil}, {"20261101", nil}})}}); err == nil {
		t.Error("days out of order encoded")
	}
}
