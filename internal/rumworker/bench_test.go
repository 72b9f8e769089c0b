package rumworker

// Benchmarks of real-user monitoring (make bench-rum writes their figures to the console;
// BENCHMARKS.md keeps them):
//   - BenchmarkFold: the aggregator's work per beacon (decode a log entry, check its views
//     against the day's record of views folded and claim them, fold them into the day's
//     running totals and its segment and attribution tables; the record written anew once per
//     ten entries, as a compaction of ten does), one core, views with every timing metric,
//     segments and attribution; reports beacons/s.
//   - BenchmarkReport10M (report_bench_test.go): report latency over 10 million page views
//     (1,000 pages, 30 days, 50 countries) stored as the aggregator stores them, against DynamoDB Local; reports p50 and
//     p99 per report kind.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/rum"
)

// benchView draws a page view with every timing metric, at the precision browsers report
// (timings in tenths of a millisecond; cls with 3 decimals as the snippet sends it).
func benchView(rng *rand.Rand, day string, pages, countries int) rum.View {
	v := drawView(rng, day, pages, countries)
	for name, x := range v.Metrics {
		if name == "cls" {
			v.Metrics[name] = math.Round(x*1000) / 1000
		} else {
			v.Metrics[name] = math.Round(x*10) / 10
		}
	}
	return v
}

func drawView(rng *rand.Rand, day string, pages, countries int) rum.View {
	lcp := math.Exp(7.6 + 0.5*rng.NormFloat64())
	inp := math.Exp(4.8 + 0.7*rng.NormFloat64())
	page := rng.IntN(pages)
	v := rum.View{
		Day:     day,
		Page:    fmt.Sprintf("/section-%d/page-%d", page%20, page),
		Country: countryCodes[zipf(rng, countryWeights[:countries])],
		Metrics: map[string]float64{
			"lcp": lcp, "fcp": lcp * 0.6, "fp": lcp * 0.55, "inp": inp,
			"cls": rng.Float64() * 0.3, "ttfb": math.Exp(5.5 + 0.4*rng.NormFloat64()),
			"dns_time": float64(rng.IntN(40)), "connect_time": float64(rng.IntN(80)),
			"server_time": math.Exp(5 + 0.5*rng.NormFloat64()), "transfer_time": float64(rng.IntN(200)),
			"dom_time": math.Exp(6 + 0.5*rng.NormFloat64()), "fully_loaded_time": lcp * 1.8,
			"transfer_size": float64(20000 + rng.IntN(80000)), "dom_size": float64(30000 + rng.IntN(200000)),
			"dom_elements": float64(300 + rng.IntN(2000)),
		},
		Segments: drawSegments(rng, page%20),
	}
	// One view in ten is of one of the website's 100 monitored pages.
	if page < pages/10 {
		v.Pages = []string{fmt.Sprintf("page%03d", page%100)}
	}
	// Attribution as the snippet sends it: an element per section, phases adding up, the
	// interaction's scripts (a first-party bundle and a tag manager) and a shifted element.
	ttfb := v.Metrics["ttfb"]
	v.Attribution = &rum.Attribution{
		LCP: &rum.LCPAttribution{Element: fmt.Sprintf("html>body>main>img.hero-%d", page%20),
			URL: fmt.Sprintf("https://cdn.example.com/img/hero-%d.jpg", page%20), Phases: [4]float64{ttfb, lcp * 0.1, lcp * 0.5, max(0, lcp*0.4-ttfb)}},
		INP: &rum.INPAttribution{Target: []string{"button#buy", "a.nav-link", "input#search", "div.menu"}[rng.IntN(4)], Type: "pointer",
			Phases: [3]float64{inp * 0.2, inp * 0.5, inp * 0.3}, Scripts: []rum.Script{
				{URL: "https://example.com/assets/app.js", Function: "onClick", Entity: rum.FirstParty, Duration: inp * 0.4},
				{URL: "https://www.googletagmanager.com/gtm.js", Function: "", Entity: "Google Tag Manager", Duration: inp * 0.2},
			}},
		CLS: &rum.CLSAttribution{Target: []string{"main>p.lead", "footer", "div.ad-slot"}[rng.IntN(3)], Time: lcp * 0.8},
	}
	return v
}

// drawSegments draws segments with realistic shares: 60 % mobile, browsers and OS that go
// with the device, 4g mostly (no connection type in Safari and Firefox), navigations mostly
// plain, and ten page groups.
func drawSegments(rng *rand.Rand, section int) rum.Segments {
	val := func(d *rum.Dim, name string) uint64 { v, _ := d.Value(name); return v }
	pick := func(names []string, weights []float64) string { return names[zipfWeights(rng, weights)] }
	var s rum.Segments
	device := pick([]string{"mobile", "desktop", "tablet"}, []float64{60, 37, 3})
	var browser, os string
	if device != "desktop" {
		browser = pick([]string{"chrome", "safari", "samsung", "firefox", "other"}, []float64{60, 30, 6, 1, 3})
		switch {
		case browser == "safari":
			os = "ios"
		default:
			os = pick([]string{"android", "ios"}, []float64{85, 15})
		}
	} else {
		browser = pick([]string{"chrome", "safari", "firefox", "edge", "opera", "other"}, []float64{65, 10, 8, 12, 2, 3})
		switch {
		case browser == "safari":
			os = "macos"
		default:
			os = pick([]string{"windows", "macos", "linux", "chromeos"}, []float64{70, 22, 5, 3})
		}
	}
	conn := "unknown"
	if browser != "safari" && browser != "firefox" {
		conn = pick([]string{"4g", "3g", "2g", "slow-2g"}, []float64{88, 8, 2, 1})
	}
	nav := pick([]string{"navigate", "reload", "back-forward", "back-forward-cache", "prerender"}, []float64{75, 5, 8, 10, 2})
	s = rum.DimDevice.With(s, val(rum.DimDevice, device))
	s = rum.DimBrowser.With(s, val(rum.DimBrowser, browser))
	s = rum.DimOS.With(s, val(rum.DimOS, os))
	s = rum.DimConnection.With(s, val(rum.DimConnection, conn))
	s = rum.DimNavigation.With(s, val(rum.DimNavigation, nav))
	return rum.DimGroup.With(s, uint64(1+section%10))
}

// countryWeights are Zipf weights of the countries: a few large, a long tail.
var countryWeights = func() []float64 {
	w := make([]float64, 26*26)
	for i := range w {
		w[i] = 1 / math.Pow(float64(i+1), 1.1)
	}
	return w
}()

func zipf(rng *rand.Rand, weights []float64) int { return zipfWeights(rng, weights) }

func zipfWeights(rng *rand.Rand, weights []float64) int {
	total := 0.0
	for _, w := range weights {
		total += w
	}
	u := rng.Float64() * total
	for i, w := range weights {
		if u -= w; u < 0 {
			return i
		}
	}
	return len(weights) - 1
}

var countryCodes = func() []string {
	var cc []string
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			cc = append(cc, string([]rune{a, b}))
		}
	}
	return cc
}()

// spaVisit draws a visit of a single-page app: its hard load (a back or forward navigation
// the cache did not restore names its reasons) and three soft navigations, each a view of its
// own with the metrics web-vitals reports for one (LCP, FCP, INP, CLS), its attribution and
// the link that started it.
func spaVisit(rng *rand.Rand, day string, pages, countries int) []rum.View {
	hard := benchView(rng, day, pages, countries)
	bf, _ := rum.DimNavigation.Value("back-forward")
	if rum.DimNavigation.Of(hard.Segments) == bf {
		hard.Attribution.NotRestored = [][]string{{"unload-listener"}, {"response-cache-control-no-store", "masked"}, {"broadcastchannel"}}[rng.IntN(3)]
	}
	out := []rum.View{hard}
	soft, _ := rum.DimNavigation.Value("soft")
	for range 3 {
		v := benchView(rng, day, pages, countries)
		v.Country, v.Segments = hard.Country, rum.DimNavigation.With(rum.DimGroup.With(hard.Segments, rum.DimGroup.Of(v.Segments)), soft)
		for name := range v.Metrics {
			switch name {
			case "lcp", "fcp", "inp", "cls":
				if name == "lcp" || name == "fcp" {
					v.Metrics[name] /= 4 // a route paints what the document already has
				}
			default:
				delete(v.Metrics, name)
			}
		}
		v.Attribution.LCP.Phases = [4]float64{0, 0, v.Metrics["lcp"] * 0.5, v.Metrics["lcp"] * 0.5}
		// The link that started it.
		v.Attribution.Start = &rum.StartAttribution{Target: fmt.Sprintf("nav>a.route-%d", rng.IntN(8)), Type: "pointer"}
		out = append(out, v)
	}
	return out
}

// BenchmarkFold: the views of hard loads only, and of visits to single-page apps (a hard load
// and three soft navigations each).
func BenchmarkFold(b *testing.B) {
	b.Run("hard", func(b *testing.B) {
		benchFold(b, func(rng *rand.Rand, day string) []rum.View { return []rum.View{benchView(rng, day, 1000, 50)} })
	})
	b.Run("spa", func(b *testing.B) {
		benchFold(b, func(rng *rand.Rand, day string) []rum.View { return spaVisit(rng, day, 1000, 50) })
	})
}

func benchFold(b *testing.B, draw func(rng *rand.Rand, day string) []rum.View) {
	rng := rand.New(rand.NewPCG(1, 1))
	at := time.Unix(1_790_000_000, 0)
	// Log entries as the rebatcher writes them: 400 views of one website each (a minute of a
	// website of 17 million views a month), each view with its ID, compressed (EncodeChunk).
	days := []string{"20261122"}
	var bodies [][]byte
	for range 10 {
		batch := rum.Batch{ID: fmt.Sprintf("b%d", len(bodies)), Account: "a", Website: "w"}
		for len(batch.Views) < 400 {
			for _, v := range draw(rng, days[0]) {
				v.ID = rum.NewViewID(at)
				batch.Views = append(batch.Views, v)
			}
		}
		body, _ := json.Marshal(batch)
		var wire rum.WireBatch
		if err := json.Unmarshal(body, &wire); err != nil {
			b.Fatal(err)
		}
		chunk, err := EncodeChunk(wire)
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, chunk)
	}
	// The day's record of folded views already holds 100,000 others.
	busy := newSeenSet()
	busy.added[days[0]] = map[rum.ViewKey]uint32{}
	for range 100_000 {
		k, _ := rum.ParseViewID(rum.NewViewID(at))
		busy.added[days[0]][k] = 1
	}
	record := busy.encode(days[0])
	// The day's segment and attribution tables as a busy day leaves them: the views of the
	// messages folded already.
	tables := daily{days[0]: newDayTables()}
	for _, body := range bodies {
		batch, err := DecodeChunk(body)
		if err != nil {
			b.Fatal(err)
		}
		for j := range batch.Views {
			v := &batch.Views[j]
			v.Segments = v.Segments.WithCountry(v.Country)
		}
		tables.addMessage(0, batch.Views)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	views := 0
	const entriesPerCompaction = 10
	var seen *seenSet
	for i := range b.N {
		// As the compaction reads a log entry.
		batch, err := DecodeChunk(bodies[i%len(bodies)])
		if err != nil {
			b.Fatal(err)
		}
		// Dedupe: search the day's record and claim the views; a compaction of ten entries
		// writes the record anew once.
		if i%entriesPerCompaction == 0 {
			seen = newSeenSet()
			if err := seen.load(days[0], record); err != nil {
				b.Fatal(err)
			}
		}
		msgs := []message{{batch: batch}}
		changed, _ := claim(msgs, seen)
		if i%entriesPerCompaction == entriesPerCompaction-1 {
			for d := range changed {
				_ = seen.encode(d)
			}
		}
		f := newFold()
		for j := range msgs[0].batch.Views {
			v := &msgs[0].batch.Views[j]
			v.Segments = v.Segments.WithCountry(v.Country)
			f.add(days, *v)
		}
		tables.addMessage(0, msgs[0].batch.Views)
		f.release() // as the aggregator does once the batch's cells are written
		views += len(batch.Views)
	}
	b.ReportMetric(float64(views)/b.Elapsed().Seconds(), "beacons/s")
	// The same per second of this process's processor time: on a shared machine, the rate of
	// one core that is not waiting for others.
	b.ReportMetric(float64(views)/(cpuTime()-cpu0).Seconds(), "beacons/cpu_s")
}

// cpuTime is the processor time this process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
