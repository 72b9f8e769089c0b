package rumworker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rollup"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// A generated beacon and what the test knows it is, independently of the code under test.
type generated struct {
	url, ua                                 string
	device, browser, os, conn, nav, country string
	group                                   string
	pages                                   []string // monitored page names
	day                                     string
	metrics                                 map[string]float64
	lcpElement                              string
}

var agents = []struct{ ua, device, browser, os string }{
	{"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Mobile Safari/537.36", "mobile", "chrome", "android"},
	{"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1", "mobile", "safari", "ios"},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36", "desktop", "chrome", "windows"},
	{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Edg/130.0.0.0", "desktop", "edge", "windows"},
	{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7; rv:131.0) Gecko/20100101 Firefox/131.0", "desktop", "firefox", "macos"},
	{"Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Safari/537.36", "tablet", "samsung", "android"},
}

// urls are the pages views land on, with the group they belong to (groups match in order:
// Products /product/*, Blog /blog/*, Home /) and the monitored pages they match.
var urls = []struct {
	path, group string
	pages       []string
}{
	{"/product/1", "Products", []string{"product-1"}},
	{"/product/2?ref=mail", "Products", nil},
	{"/blog/post", "Blog", nil},
	{"/index.html", "(none)", []string{"index"}},
	{"/index.html?from=ad&utm=x", "(none)", []string{"index", "index-ad"}},
	{"/", "Home", nil},
}

func generate(rng *rand.Rand, days []string) generated {
	a := agents[rng.IntN(len(agents))]
	u := urls[rng.IntN(len(urls))]
	g := generated{url: "https://shop.example" + u.path, ua: a.ua, device: a.device, browser: a.browser, os: a.os,
		conn: []string{"4g", "3g", "unknown"}[rng.IntN(3)], nav: []string{"navigate", "reload", "back-forward-cache"}[rng.IntN(3)],
		country: []string{"DE", "FR", "US", "JP"}[rng.IntN(4)], group: u.group, pages: u.pages, day: days[rng.IntN(len(days))],
		metrics: map[string]float64{}, lcpElement: []string{"img#hero", "h1.title"}[rng.IntN(2)]}
	for _, m := range []string{"lcp", "inp", "cls", "fcp", "ttfb"} {
		if rng.IntN(5) == 0 && m != "lcp" {
			continue // some views lack a metric
		}
		var v float64
		switch m {
		case "cls":
			v = math.Round(rng.Float64()*400) / 1000
		case "inp":
			v = float64(8 * (1 + rng.IntN(90)))
		default:
			v = math.Round(math.Exp(7+0.8*rng.NormFloat64())*10) / 10
		}
		g.metrics[m] = v
	}
	if rng.IntN(10) == 0 {
		g.metrics["lcp"] = 2500 // exactly the threshold: good
	}
	return g
}

func (g generated) beacon(site string) []byte {
	lcp := g.metrics["lcp"]
	hints := map[string]any{"n": g.nav, "e": g.conn}
	if g.conn == "unknown" {
		delete(hints, "e")
	}
	b, _ := json.Marshal(map[string]any{"w": site, "u": g.url, "m": g.metrics, "s": hints,
		"a": map[string]any{"lcp": map[string]any{"e": g.lcpElement, "p": []float64{lcp * 0.1, lcp * 0.2, lcp * 0.3, lcp * 0.4}}}})
	return b
}

func (g generated) value(d *rum.Dim) string {
	switch d {
	case rum.DimDevice:
		return g.device
	case rum.DimBrowser:
		return g.browser
	case rum.DimOS:
		return g.os
	case rum.DimConnection:
		return g.conn
	case rum.DimNavigation:
		return g.nav
	case rum.DimCountry:
		return g.country
	}
	return g.group
}

// Views generated as beacons go through the collect endpoint's view making (user agent,
// hints, groups, monitored pages), the rebatcher, the aggregator, DynamoDB Local and S3; every report over any
// filters, breakdown and page returns exactly the views that match, counted, rated and with
// their percentile within the sketches' accuracy.
func TestSegmentFiltersAndPageGroupsAreExact(t *testing.T) {
	st, site := benchWebsite(t)
	ctx := context.Background()
	set, err := rum.ApplySettings(model.RUMSettings{}, model.RUMSettings{Groups: []model.PageGroup{
		{Name: "Products", Pattern: "/product/*"}, {Name: "Blog", Pattern: "/blog/*"}, {Name: "Home", Pattern: "/"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutRUMSettings(ctx, site.Account, site.ID, set); err != nil {
		t.Fatal(err)
	}
	site.Domain = "shop.example"
	pageIDs := map[string]string{"product-1": "p1", "index": "pi", "index-ad": "pa"}
	s := rum.NewSite(site, set, []model.Page{{ID: "p1", URL: "/product/1"}, {ID: "pi", URL: "/index.html"}, {ID: "pa", URL: "/index.html?from=ad"}})

	rng := rand.New(rand.NewPCG(4, 2))
	days := []string{"20261201", "20261202"}
	var gens []generated
	batch := rum.Batch{ID: "b0", Account: site.Account, Website: site.ID}
	var bodies []string
	for i := range 700 {
		g := generate(rng, days)
		b, err := rum.ParseBeacon(g.beacon(site.ID))
		if err != nil {
			t.Fatal(err)
		}
		v, err := s.View(b, rum.Request{UserAgent: g.ua, Country: g.country, Day: g.day})
		if err != nil {
			t.Fatal(err)
		}
		v.ID = rum.NewViewID(time.Unix(1_790_000_000+int64(i/50), 0))
		gens = append(gens, g)
		batch.Views = append(batch.Views, v)
		if len(batch.Views) == 100 {
			body, _ := json.Marshal(batch)
			bodies = append(bodies, string(body))
			batch = rum.Batch{ID: fmt.Sprintf("b%d", len(bodies)), Account: site.Account, Website: site.ID}
		}
	}
	rums := awstest.RUM(t, st)
	fifo := awstest.FIFOQueue(t, awstest.Clients(t), service.RUMQueueSettings)
	rb := rumworker.NewRebatcherWith(rums, st, fifo, func(string) string { return "XX" }, awstest.Log(t))
	agg := rumworker.NewAggregatorWith(st, rums, quota.NewKeeper(st, time.Now), awstest.Log(t), func(string) string { return "XX" })
	ev := awstest.SQSEvent(bodies...)
	// Twice: a redelivered batch counts once.
	for range 2 {
		if resp, err := rb.HandleSQS(ctx, ev); err != nil || len(resp.BatchItemFailures) > 0 {
			t.Fatalf("%v %v", err, resp.BatchItemFailures)
		}
		awstest.Drain(t, fifo, 10, agg.HandleSQS, func(n int) bool { return n >= 1 })
	}

	r := rum.NewSegmentReader(rums, st)
	from, _ := time.Parse("20060102", days[0])
	to, _ := time.Parse("20060102", days[1])
	type want struct {
		views uint64
		rated [3]uint64
		vals  []float64
	}
	expect := func(metric string, page string, filters []rum.Filter, by *rum.Dim) map[string]*want {
		out := map[string]*want{}
		vital := rum.Vitals[slices.IndexFunc(rum.Vitals, func(v rum.Vital) bool { return v.Name == metric })]
	views:
		for _, g := range gens {
			x, ok := g.metrics[metric]
			if !ok || (page != "" && !slices.Contains(g.pages, page)) {
				continue
			}
			for _, f := range filters {
				if !slices.Contains(f.Values, g.value(f.Dim)) {
					continue views
				}
			}
			key := ""
			if by != nil {
				key = g.value(by)
			}
			w := out[key]
			if w == nil {
				w = &want{}
				out[key] = w
			}
			w.views++
			w.rated[vital.Rate(x)]++
			w.vals = append(w.vals, x)
		}
		return out
	}
	check := func(name string, got rum.Summary, w *want, metric string) {
		t.Helper()
		if w == nil {
			w = &want{}
		}
		if got.Views != w.views || got.Rated != w.rated {
			t.Errorf("%s: %d views rated %v, want %d rated %v", name, got.Views, got.Rated, w.views, w.rated)
			return
		}
		if w.views == 0 {
			return
		}
		slices.Sort(w.vals)
		exact := w.vals[int(0.75*float64(len(w.vals)-1))]
		if math.Abs(got.Value-exact) > exact*rollup.RelativeAccuracy+0.5 {
			t.Errorf("%s: p75 %v, exact %v", name, got.Value, exact)
		}
	}
	dev := func(v ...string) rum.Filter { return rum.Filter{Dim: rum.DimDevice, Values: v} }
	for _, c := range []struct {
		metric  string
		page    string
		filters []rum.Filter
		by      *rum.Dim
	}{
		{"lcp", "", nil, nil},
		{"lcp", "", nil, rum.DimGroup},
		{"inp", "", nil, rum.DimDevice},
		{"cls", "", []rum.Filter{{Dim: rum.DimGroup, Values: []string{"Products"}}}, rum.DimBrowser},
		{"lcp", "", []rum.Filter{dev("mobile", "tablet")}, rum.DimCountry},
		{"ttfb", "", []rum.Filter{{Dim: rum.DimCountry, Values: []string{"DE"}}}, rum.DimConnection},
		{"fcp", "", []rum.Filter{{Dim: rum.DimNavigation, Values: []string{"reload"}}, {Dim: rum.DimOS, Values: []string{"android", "ios"}}}, rum.DimCountry},
		{"lcp", "", []rum.Filter{{Dim: rum.DimGroup, Values: []string{"(none)"}}, dev("desktop"), {Dim: rum.DimConnection, Values: []string{"unknown"}}}, rum.DimNavigation},
		{"lcp", "index", nil, nil},
		{"lcp", "index-ad", nil, rum.DimDevice},
		{"inp", "product-1", []rum.Filter{{Dim: rum.DimBrowser, Values: []string{"chrome"}}}, rum.DimOS},
		{"cls", "index", []rum.Filter{{Dim: rum.DimDevice, Values: []string{"mobile"}}}, rum.DimCountry},
	} {
		name := fmt.Sprintf("%s page=%s filters=%v by=%v", c.metric, c.page, c.filters, c.by)
		q := rum.SegmentQuery{Account: site.Account, Website: site.ID, Metric: c.metric, From: from, To: to, Filters: c.filters, By: c.by}
		if c.page != "" {
			q.Page = pageIDs[c.page]
		}
		wants := expect(c.metric, c.page, c.filters, c.by)
		if c.by == nil {
			d, err := r.Distribution(ctx, q)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			check(name, d.Summary, wants[""], c.metric)
			var hist uint64
			for _, b := range d.Histogram {
				hist += b.Views
			}
			if hist != d.Views || d.Partial {
				t.Errorf("%s: histogram of %d views, want %d (partial %v)", name, hist, d.Views, d.Partial)
			}
			continue
		}
		b, err := r.Breakdown(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(b.Rows) != len(wants) {
			t.Errorf("%s: keys %v, want %d keys", name, b.Rows, len(wants))
		}
		for _, row := range b.Rows {
			check(name+" "+row.Key, row.Summary, wants[row.Key], c.metric)
		}
		// The trend splits the same views by day.
		tr, err := r.Trend(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var sum uint64
		for _, d := range tr.Days {
			sum += d.Views
		}
		if sum != b.Total.Views || len(tr.Days) != 2 {
			t.Errorf("%s: trend of %d views in %d days, breakdown %d", name, sum, len(tr.Days), b.Total.Views)
		}
	}

	// Top LCP elements: every matching view is one element's.
	at, err := r.Attributions(ctx, rum.SegmentQuery{Account: site.Account, Website: site.ID, Metric: "lcp", From: from, To: to,
		Filters: []rum.Filter{dev("mobile")}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	perElement := map[string]uint64{}
	for _, g := range gens {
		if g.device == "mobile" {
			perElement[g.lcpElement]++
		}
	}
	for _, row := range at.Kinds["lcp"] {
		if row.Views != perElement[row.Fields["element"]] || math.Abs(row.Parts["timeToFirstByte"]+row.Parts["resourceLoadDelay"]+
			row.Parts["resourceLoadDuration"]+row.Parts["elementRenderDelay"]-row.Mean) > 0.2 {
			t.Errorf("element %+v, want %d views and phases adding up to the mean", row, perElement[row.Fields["element"]])
		}
	}
	if len(at.Kinds["lcp"]) != len(perElement) {
		t.Errorf("%d elements, want %d", len(at.Kinds["lcp"]), len(perElement))
	}
	// A filter an attribution table does not keep is refused, not answered wrongly.
	_, err = r.Attributions(ctx, rum.SegmentQuery{Account: site.Account, Website: site.ID, Metric: "lcp", From: from, To: to,
		Filters: []rum.Filter{dev("mobile"), {Dim: rum.DimCountry, Values: []string{"DE"}}}}, 10)
	var qe *rum.QueryError
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "filter by") {
		t.Errorf("two filters on website-wide attributions: %v", err)
	}
	_, err = r.Breakdown(ctx, rum.SegmentQuery{Account: site.Account, Website: site.ID, Metric: "lcp", From: from, To: to, Page: pageIDs["index"],
		Filters: []rum.Filter{{Dim: rum.DimCountry, Values: []string{"DE"}}}, By: rum.DimBrowser})
	if !errors.As(err, &qe) {
		t.Errorf("a page's views by country and browser, which its tables do not keep: %v", err)
	}
}
