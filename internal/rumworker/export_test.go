package rumworker

import (
	"context"
	"math/rand/v2"
	"sync/atomic"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
)

// Exports for the external tests (the report benchmark needs the fold but cannot be in this
// package: awstest imports the service, which this package imports).

// BenchView draws a page view with every timing metric.
func BenchView(rng *rand.Rand, day string, pages, countries int) rum.View {
	return benchView(rng, day, pages, countries)
}

// RunningTotals accumulates page views the way a month's running totals do.
type RunningTotals struct{ f fold }

// NewRunningTotals starts empty totals.
func NewRunningTotals() *RunningTotals { return &RunningTotals{f: fold{}} }

// Add counts one view, with the given metrics only.
func (t *RunningTotals) Add(v rum.View, metrics []string) {
	w := rum.WireView{Page: v.Page, Country: v.Country, Timings: make([]float64, rum.NumTimings)}
	for i := range w.Timings {
		w.Timings[i] = -1
	}
	for _, m := range metrics {
		i, _ := rum.TimingIndex(m)
		w.Timings[i] = v.Metrics[m]
	}
	t.f.add([]string{""}, w)
}

// Store writes the totals as one day's tables and returns the bytes and tables written and
// the largest table.
func (t *RunningTotals) Store(ctx context.Context, st *store.Store, account, website, day string) (bytes, tables, largest int64, err error) {
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
		return st.PutRUMTable(ctx, account, website, stored, model.RUMTable{Data: data})
	})
	return b.Load(), n.Load(), big.Load(), err
}
