package rum

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rollup"
)

// ReportStore is what reports need of the table.
type ReportStore interface {
	RUMIndexes(ctx context.Context, account, website string, months []string) (map[string]model.RUMIndex, error)
	RUMTables(ctx context.Context, account, website string, cells []model.RUMCell, consistent bool) (map[model.RUMCell]model.RUMTable, error)
	RUMDistinct(ctx context.Context, account, website string, days []string, consistent bool) (map[string]model.RUMTable, error)
}

// Reader answers field-data reports from the rollups.
type Reader struct {
	store ReportStore
}

// NewReader returns a Reader over the table.
func NewReader(st ReportStore) *Reader { return &Reader{store: st} }

// The dimensions of a report: pages (normalized paths) and countries (ISO codes).
const (
	DimPages     = rollup.DimPages
	DimCountries = rollup.DimCountries
)

// Query asks for one dimension of a website's page views over a range of UTC days, with the
// 75th percentile of the given metrics.
type Query struct {
	Account, Website string
	Dim              string // DimPages or DimCountries
	Metrics          []string
	From, To         time.Time // days, inclusive
}

// Row is one key of a report.
type Row struct {
	Key   string
	Views uint64
	// P75 holds the 75th percentile of each requested metric that has values for this key.
	P75 map[string]float64
}

// Report is a dimension's page views per key.
type Report struct {
	Rows  []Row
	Views uint64 // total page views
	// Pages is the number of distinct pages (pages reports): exact, unless views went to
	// rollup.OtherKey, when it is the day sketches' estimate (HyperLogLog, ~1 %).
	Pages uint64
}

// UnknownMetricError is a requested metric that is neither a timing metric nor a custom
// variable the website has sent in the range.
type UnknownMetricError struct{ Name string }

func (e *UnknownMetricError) Error() string { return fmt.Sprintf("unknown timing metric %q", e.Name) }

// Report reads a report: per month of the range, the running totals at the range's end minus
// those before its start.
func (r *Reader) Report(ctx context.Context, q Query) (Report, error) {
	from, to := q.From.UTC().Format(dayLayout), q.To.UTC().Format(dayLayout)
	var months []string
	for m := time.Date(q.From.Year(), q.From.Month(), 1, 0, 0, 0, 0, time.UTC); m.Format(dayLayout) <= to; m = m.AddDate(0, 1, 0) {
		months = append(months, m.Format("200601"))
	}
	idx, err := r.store.RUMIndexes(ctx, q.Account, q.Website, months)
	if err != nil {
		return Report{}, err
	}
	if err := checkMetrics(q.Metrics, idx); err != nil {
		return Report{}, err
	}
	plus, minus := runningTotals(idx, months, from, to)
	totals, err := r.sumTables(ctx, q, plus, minus)
	if err != nil {
		return Report{}, err
	}
	rep := reportOf(totals, q.Metrics)
	if q.Dim == DimPages {
		rep.Pages = uint64(len(rep.Rows))
		if slices.ContainsFunc(rep.Rows, func(r Row) bool { return r.Key == rollup.OtherKey }) {
			if rep.Pages, err = r.distinctPages(ctx, q, to, rep.Pages-1); err != nil {
				return Report{}, err
			}
		}
	}
	return rep, nil
}

// checkMetrics returns an UnknownMetricError for the first of metrics that is neither a
// timing metric nor a custom variable of the months' indexes.
func checkMetrics(metrics []string, idx map[string]model.RUMIndex) error {
	for _, name := range metrics {
		if _, std := Metrics[name]; std {
			continue
		}
		known := false
		for _, ix := range idx {
			known = known || slices.Contains(ix.Custom, name)
		}
		if !known {
			return &UnknownMetricError{Name: name}
		}
	}
	return nil
}

// runningTotals returns the days whose running totals to add (the range's last day with data,
// per month) and to subtract (the last day with data before the range starts, in the range's
// first month).
func runningTotals(idx map[string]model.RUMIndex, months []string, from, to string) (plus, minus []string) {
	for _, month := range months {
		ix := idx[month]
		end := min(to, month+"31")
		hi := rollup.LatestAtOrBefore(ix.Days, end)
		if hi == "" || hi < from {
			continue
		}
		plus = append(plus, hi)
		if from > month+"01" {
			if lo := rollup.LatestBefore(ix.Days, from); lo != "" {
				minus = append(minus, lo)
			}
		}
	}
	return plus, minus
}

// sumTables reads the tables of the views and q's metrics on the days plus and minus and sums
// them per metric, over shards and months, adding plus's and subtracting minus's. Shards hold
// disjoint keys but for rollup.OtherKey.
func (r *Reader) sumTables(ctx context.Context, q Query, plus, minus []string) (map[string]*rollup.Table, error) {
	metrics := append([]string{rollup.ViewsMetric}, q.Metrics...)
	var cells []model.RUMCell
	for _, day := range append(slices.Clone(plus), minus...) {
		for _, m := range metrics {
			for s := range rollup.Shards(q.Dim) {
				cells = append(cells, model.RUMCell{Day: day, Dim: q.Dim, Metric: m, Shard: s})
			}
		}
	}
	stored, err := r.store.RUMTables(ctx, q.Account, q.Website, cells, false)
	if err != nil {
		return nil, err
	}
	totals := make(map[string]*rollup.Table, len(metrics))
	for _, m := range metrics {
		acc := rollup.NewTable(m)
		for _, sign := range []struct {
			days []string
			add  bool
		}{{plus, true}, {minus, false}} {
			for _, day := range sign.days {
				for s := range rollup.Shards(q.Dim) {
					st, ok := stored[model.RUMCell{Day: day, Dim: q.Dim, Metric: m, Shard: s}]
					if !ok {
						continue
					}
					t, err := rollup.DecodeTable(st.Data)
					if err != nil {
						return nil, fmt.Errorf("RUM table %s %s %s %d: %w", day, q.Dim, m, s, err)
					}
					if sign.add {
						acc.Merge(t, true)
					} else {
						acc.Sub(t)
					}
				}
			}
		}
		totals[m] = acc
	}
	return totals, nil
}

// reportOf makes the report's rows of the summed tables: a row per key with views, with the
// p75 of each of metrics, most views first.
func reportOf(totals map[string]*rollup.Table, metrics []string) Report {
	var rep Report
	for key, n := range totals[rollup.ViewsMetric].Counts {
		if n == 0 {
			continue
		}
		row := Row{Key: key, Views: n}
		for _, m := range metrics {
			if s := totals[m].Sketches[key]; s != nil {
				if v, ok := s.Quantile(0.75); ok {
					if row.P75 == nil {
						row.P75 = map[string]float64{}
					}
					row.P75[m] = v
				}
			}
		}
		rep.Rows = append(rep.Rows, row)
		rep.Views += n
	}
	slices.SortFunc(rep.Rows, func(a, b Row) int {
		if a.Views != b.Views {
			return int(min(max(int64(b.Views)-int64(a.Views), -1), 1))
		}
		if a.Key < b.Key {
			return -1
		}
		return 1
	})
	return rep
}

// distinctPages estimates the distinct pages of a range from its days' HyperLogLogs; known is
// the number of distinct pages stored under their own key, which the estimate cannot be below.
func (r *Reader) distinctPages(ctx context.Context, q Query, to string, known uint64) (uint64, error) {
	var days []string
	for d := q.From.UTC(); d.Format(dayLayout) <= to; d = d.AddDate(0, 0, 1) {
		days = append(days, d.Format(dayLayout))
	}
	stored, err := r.store.RUMDistinct(ctx, q.Account, q.Website, days, false)
	if err != nil {
		return 0, err
	}
	union, _ := rollup.DecodeDistinct(nil)
	for day, st := range stored {
		hll, err := rollup.DecodeDistinct(st.Data)
		if err != nil {
			return 0, fmt.Errorf("distinct pages of %s: %w", day, err)
		}
		if err := union.Merge(hll); err != nil {
			return 0, err
		}
	}
	return max(union.Estimate(), known), nil
}

const dayLayout = "20060102"

// Round gives a metric's reported value: cls with 3 decimals, custom variables with 2, and
// every other metric (milliseconds, bytes, counts) as an integer.
func Round(metric string, v float64) float64 {
	switch {
	case metric == "cls":
		return math.Round(v*1000) / 1000
	case IsCustomName(metric):
		return math.Round(v*100) / 100
	default:
		return math.Round(v)
	}
}
