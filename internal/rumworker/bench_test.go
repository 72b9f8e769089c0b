package rumworker

// Benchmarks of real-user monitoring (make bench-rum writes their figures to the console;
// BENCHMARKS.md keeps them):
//   - BenchmarkFold: the aggregator's work per beacon (decode a queue message, check its views
//     against the record of views folded in their 10-second window and claim them, fold them
//     into the day's tables), one core; reports beacons/s.
//   - BenchmarkReport10M (report_bench_test.go): report latency over 10 million page views
//     (1,000 pages, 30 days, 50 countries) stored as the aggregator stores them, against DynamoDB Local; reports p50 and
//     p99 per report kind.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
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
	page := rng.IntN(pages)
	return rum.View{
		Day:     day,
		Page:    fmt.Sprintf("/section-%d/page-%d", page%20, page),
		Country: countryCodes[rng.IntN(countries)],
		Metrics: map[string]float64{
			"lcp": lcp, "fcp": lcp * 0.6, "fp": lcp * 0.55, "inp": math.Exp(4.8 + 0.7*rng.NormFloat64()),
			"cls": rng.Float64() * 0.3, "ttfb": math.Exp(5.5 + 0.4*rng.NormFloat64()),
			"dns_time": float64(rng.IntN(40)), "connect_time": float64(rng.IntN(80)),
			"server_time": math.Exp(5 + 0.5*rng.NormFloat64()), "transfer_time": float64(rng.IntN(200)),
			"dom_time": math.Exp(6 + 0.5*rng.NormFloat64()), "fully_loaded_time": lcp * 1.8,
			"transfer_size": float64(20000 + rng.IntN(80000)), "dom_size": float64(30000 + rng.IntN(200000)),
			"dom_elements": float64(300 + rng.IntN(2000)),
		},
	}
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

func BenchmarkFold(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	at := time.Unix(1_790_000_000, 0)
	// Aggregator messages as the rebatcher writes them: 400 views of one website each, each
	// view with its ID.
	var bodies [][]byte
	for range 10 {
		batch := rum.Batch{ID: fmt.Sprintf("b%d", len(bodies)), Account: "a", Website: "w"}
		for range maxViewsPerFold {
			v := benchView(rng, "20261122", 1000, 50)
			v.ID = rum.NewViewID(at)
			batch.Views = append(batch.Views, v)
		}
		body, _ := json.Marshal(batch)
		bodies = append(bodies, body)
	}
	// The window's record of folded views already holds 10,000 others: a website collecting
	// 1,000 views a second.
	busy := newSeenSet()
	for range 10_000 {
		k, _ := rum.ParseViewID(rum.NewViewID(at))
		busy.added[k] = 1
	}
	win := window(mustParse(rum.NewViewID(at)))
	record := busy.encode(win)
	days := []string{"20261122"}
	b.ReportAllocs()
	b.ResetTimer()
	views := 0
	for i := range b.N {
		var batch rum.WireBatch
		if err := json.Unmarshal(bodies[i%len(bodies)], &batch); err != nil {
			b.Fatal(err)
		}
		// Dedupe: search the window's record, claim the views, write the record anew.
		seen := newSeenSet()
		if err := seen.load(win, record); err != nil {
			b.Fatal(err)
		}
		msgs := []message{{batch: batch}}
		changed, _ := claim(msgs, seen)
		for w := range changed {
			_ = seen.encode(w)
		}
		f := fold{}
		for _, v := range msgs[0].batch.Views {
			f.add(days, v)
		}
		views += len(batch.Views)
	}
	b.ReportMetric(float64(views)/b.Elapsed().Seconds(), "beacons/s")
}

func mustParse(id string) rum.ViewKey {
	k, _ := rum.ParseViewID(id)
	return k
}
