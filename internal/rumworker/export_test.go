package rumworker

import (
	"context"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rumstore"
)

// Exports for the external tests (the report benchmark needs the fold but cannot be in this
// package: awstest imports the service, which this package imports).

// SPAVisit draws a visit of a single-page app: a hard load and three soft navigations.
func SPAVisit(rng *rand.Rand, day string, pages, countries int) []rum.View {
	return spaVisit(rng, day, pages, countries)
}

// BenchView draws a page view with every timing metric.
func BenchView(rng *rand.Rand, day string, pages, countries int) rum.View {
	return benchView(rng, day, pages, countries)
}

// RunningTotals accumulates page views the way a month's running totals do.
type RunningTotals struct{ f *fold }

// NewRunningTotals starts empty totals.
func NewRunningTotals() *RunningTotals { return &RunningTotals{f: newFold()} }

// Add counts one view, with the given metrics only.
func (t *RunningTotals) Add(v rum.View, metrics []string) {
	w := rum.WireView{Page: v.Page, Country: v.Country, Timings: make([]float64, rum.NumTimings)}
	for i := range w.Timings {
		w.Timings[i] = -1
	}
	for _, m := range metrics {
		if x, ok := v.Metrics[m]; ok {
			i, _ := rum.TimingIndex(m)
			w.Timings[i] = x
		}
	}
	t.f.add([]string{""}, w)
}

// Tables are the totals as one day's tables, encoded.
func (t *RunningTotals) Tables(day string) map[model.RUMCell][]byte {
	out := map[model.RUMCell][]byte{}
	for _, c := range t.f.cells() {
		data := t.f.table(c).Encode()
		c.Day = day
		out[c] = data
	}
	return out
}

// Store writes the totals as one day's tables into a compaction's session (its Commit writes
// them) and returns the bytes and tables written and the largest table.
func (t *RunningTotals) Store(ctx context.Context, sess *rumstore.Session, day string) (bytes, tables, largest int64, err error) {
	var b, n, big atomic.Int64
	err = forEachLimited(ctx, t.f.cells(), 8, func(c model.RUMCell) error {
		data := t.f.table(c).Encode()
		b.Add(int64(len(data)))
		n.Add(1)
		for {
			old := big.Load()
			if int64(len(data)) <= old || big.CompareAndSwap(old, int64(len(data))) {
				break
			}
		}
		stored := c
		stored.Day = day
		return sess.PutTable(ctx, stored, data)
	})
	return b.Load(), n.Load(), big.Load(), err
}

// DailyTables accumulates page views into one day's segment and attribution tables, as the
// aggregator folds them.
type DailyTables struct {
	d   daily
	day string
}

// NewDailyTables starts empty tables of a day.
func NewDailyTables(day string) *DailyTables {
	return &DailyTables{d: daily{day: newDayTables()}, day: day}
}

// Add folds views of the day (their countries already placed).
func (t *DailyTables) Add(views []rum.View) {
	wire := make([]rum.WireView, len(views))
	for i, v := range views {
		wire[i] = v.Wire()
		wire[i].Day = t.day
		wire[i].Segments = wire[i].Segments.WithCountry(v.Country)
	}
	t.d.addMessage(0, wire)
}

// Store writes the day's tables into a compaction's session (its Commit writes them) and
// returns the bytes and tables written.
func (t *DailyTables) Store(ctx context.Context, sess *rumstore.Session) (bytes, tables int64, err error) {
	var b, n atomic.Int64
	err = forEachLimited(ctx, t.cells(), 8, func(c model.RUMCell) error {
		tb, err := t.d.table(c)
		if err != nil {
			return err
		}
		data := tb.EncodeWithin(maxDailyBytes)
		b.Add(int64(len(data)))
		n.Add(1)
		return sess.PutTable(ctx, c, data)
	})
	return b.Load(), n.Load(), err
}

// Tables are the day's tables, encoded as the aggregator stores them.
func (t *DailyTables) Tables() (map[model.RUMCell][]byte, error) {
	out := map[model.RUMCell][]byte{}
	for _, c := range t.cells() {
		tb, err := t.d.table(c)
		if err != nil {
			return nil, err
		}
		out[c] = tb.EncodeWithin(maxDailyBytes)
	}
	return out, nil
}

func (t *DailyTables) cells() []model.RUMCell {
	var cells []model.RUMCell
	tab := t.d[t.day]
	for i, mask := range rum.SiteMasks {
		for shard, rows := range tab.seg[i] {
			used := usedVitals(rows)
			for vi, u := range used {
				if u {
					cells = append(cells, model.RUMCell{Day: t.day, Dim: rum.SegmentDim(mask), Metric: rum.Vitals[vi].Name, Shard: shard, Daily: true})
				}
			}
		}
	}
	for ki, kind := range rum.AttrKinds {
		for mi, mask := range kind.Masks {
			if len(tab.attr[ki][mi]) > 0 {
				cells = append(cells, model.RUMCell{Day: t.day, Dim: rum.AttributionDim(kind, mask), Metric: rum.Vitals[kind.Vital].Name, Daily: true})
			}
		}
	}
	for shard := range rum.PageShards {
		for mi, mask := range rum.PageMasks {
			for vi, u := range usedVitals(tab.pageSeg[mi][shard]) {
				if u {
					cells = append(cells, model.RUMCell{Day: t.day, Dim: rum.PageSegmentDim(mask), Metric: rum.Vitals[vi].Name, Shard: shard, Daily: true})
				}
			}
		}
		for ki, kind := range rum.AttrKinds {
			if len(tab.pageAttr[shard][ki]) > 0 {
				cells = append(cells, model.RUMCell{Day: t.day, Dim: rum.PageAttributionDim(kind), Metric: rum.Vitals[kind.Vital].Name, Shard: shard, Daily: true})
			}
		}
	}
	return cells
}

func usedVitals[K comparable](rows map[K]*segRow) (used [rum.NumVitals]bool) {
	for _, r := range rows {
		for i := range r {
			used[i] = used[i] || r[i].Views() > 0
		}
	}
	return used
}

// SetRebatcherClock makes the rebatcher read the time from now (a simulation's clock).
func SetRebatcherClock(r *Rebatcher, now func() time.Time) { r.now = now }

// SetAggregatorClock makes the aggregator read the time from now.
func SetAggregatorClock(a *Aggregator, now func() time.Time) { a.now = now }
