package google

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"

	"google.golang.org/api/chromeuxreport/v1"

	"github.com/openvitals/openvitals/internal/model"
)

// formFactors are the dataset's form factors of the devices pages are monitored on.
var formFactors = map[string]string{"mobile": "PHONE", "desktop": "DESKTOP"}

// cruxMetrics maps the dataset's metric names to the interface's vital names. First Input
// Delay is not among them: the API no longer serves it.
var cruxMetrics = map[string]string{
	"largest_contentful_paint":        "lcp",
	"interaction_to_next_paint":       "inp",
	"cumulative_layout_shift":         "cls",
	"first_contentful_paint":          "fcp",
	"experimental_time_to_first_byte": "ttfb",
}

// ErrNoData is the dataset having no record for a URL and form factor (the API's 404): too
// little traffic, or a page that is not public. It is an outcome, not a failure.
var ErrNoData = errors.New("no user-experience data for this URL")

// CrUXRecord reads the record of a page URL on a device ("mobile" or "desktop"): each vital's
// 75th percentile and its good / needs-improvement / poor shares. It is ErrNoData when the
// dataset has none.
func (c *Client) CrUXRecord(ctx context.Context, url, device string) (map[string]model.Vital, error) {
	req := &chromeuxreport.QueryRequest{Url: url, FormFactor: formFactors[device], Metrics: cruxMetricNames()}
	res, err := query(ctx, c, "CrUX "+url+" "+device, func(ctx context.Context) (*chromeuxreport.QueryResponse, error) {
		return c.crux.Records.QueryRecord(req).Context(ctx).Do()
	})
	if err != nil {
		return nil, err
	}
	if res.Record == nil {
		return nil, ErrNoData
	}
	vitals := parseRecord(res.Record)
	if len(vitals) == 0 {
		return nil, ErrNoData
	}
	return vitals, nil
}

// parseRecord reads the vitals of a record. A metric without a 75th percentile or histogram is
// left out rather than filled in.
func parseRecord(r *chromeuxreport.Record) map[string]model.Vital {
	out := map[string]model.Vital{}
	for name, m := range r.Metrics {
		vital, ok := cruxMetrics[name]
		if !ok || m.Percentiles == nil || len(m.Histogram) < 2 {
			continue
		}
		p75, ok := numeric(m.Percentiles.P75)
		if !ok {
			continue
		}
		// Three bins: good, needs improvement, poor. Should the API ever send more, the first is
		// good, the last is poor, and those between need improvement.
		shares := make([]float64, len(m.Histogram))
		for i, b := range m.Histogram {
			if b != nil {
				shares[i], _ = numeric(b.Density) // a bin without density has none
			}
		}
		good, poor := shares[0], shares[len(shares)-1]
		ni := 0.0
		for _, s := range shares[1 : len(shares)-1] {
			ni += s
		}
		out[vital] = model.Vital{P75: p75, Good: percent(good), NeedsImprovement: percent(ni), Poor: percent(poor)}
	}
	return out
}

// numeric reads a number the API sends as a JSON number or, for CLS, as a string ("0.05").
func numeric(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// percent turns a density (0 to 1) into percent with two decimals.
func percent(density float64) float64 { return math.Round(density*10000) / 100 }

// CrUXHistory reads the dataset's history (records:queryHistoryRecord) of a page URL, or of
// an origin when url is "https://host" with no path, on a device: model.UXHistoryPeriods
// weekly collection periods, oldest first, each vital's p75 and shares. A period without data
// for a vital (the API's "NaN" densities and null p75) leaves that vital out. It is ErrNoData
// when the dataset has no history.
func (c *Client) CrUXHistory(ctx context.Context, url string, origin bool, device string) ([]model.UXPeriod, error) {
	req := &chromeuxreport.QueryHistoryRequest{FormFactor: formFactors[device], Metrics: cruxMetricNames(), CollectionPeriodCount: model.UXHistoryPeriods}
	if origin {
		req.Origin = url
	} else {
		req.Url = url
	}
	res, err := query(ctx, c, "CrUX history "+url+" "+device, func(ctx context.Context) (*chromeuxreport.QueryHistoryResponse, error) {
		return c.crux.Records.QueryHistoryRecord(req).Context(ctx).Do()
	})
	if err != nil {
		return nil, err
	}
	if res.Record == nil || len(res.Record.CollectionPeriods) == 0 {
		return nil, ErrNoData
	}
	return parseHistory(res.Record), nil
}

// parseHistory reads the periods of a history record.
func parseHistory(r *chromeuxreport.HistoryRecord) []model.UXPeriod {
	out := make([]model.UXPeriod, len(r.CollectionPeriods))
	for i, p := range r.CollectionPeriods {
		if p != nil {
			out[i] = model.UXPeriod{First: dateDay(p.FirstDate), Last: dateDay(p.LastDate)}
		}
		out[i].Vitals = map[string]model.Vital{}
	}
	for name, m := range r.Metrics {
		vital, ok := cruxMetrics[name]
		if !ok || m.PercentilesTimeseries == nil || len(m.HistogramTimeseries) < 2 {
			continue
		}
		for i := range out {
			if i >= len(m.PercentilesTimeseries.P75s) {
				break
			}
			p75, ok := numeric(m.PercentilesTimeseries.P75s[i])
			if !ok {
				continue // null: no data in this period
			}
			shares := make([]float64, len(m.HistogramTimeseries))
			for b, bin := range m.HistogramTimeseries {
				if bin != nil && i < len(bin.Densities) && !math.IsNaN(bin.Densities[i]) {
					shares[b] = bin.Densities[i]
				}
			}
			good, poor := shares[0], shares[len(shares)-1]
			ni := 0.0
			for _, s := range shares[1 : len(shares)-1] {
				ni += s
			}
			out[i].Vitals[vital] = model.Vital{P75: p75, Good: percent(good), NeedsImprovement: percent(ni), Poor: percent(poor)}
		}
	}
	return out
}

// dateDay is a date of the API as a day (yyyymmdd); "" without one.
func dateDay(d *chromeuxreport.Date) string {
	if d == nil {
		return ""
	}
	return fmt.Sprintf("%04d%02d%02d", d.Year, d.Month, d.Day)
}

// cruxMetricNames are the names of the metrics the queries ask for.
func cruxMetricNames() []string {
	names := make([]string, 0, len(cruxMetrics))
	for name := range cruxMetrics {
		names = append(names, name)
	}
	return names
}

// query makes a query of the dataset (what names it in the log), paced and retried as c's
// queries are; the API's 404, no data, is ErrNoData.
func query[R any](ctx context.Context, c *Client, what string, do func(context.Context) (R, error)) (R, error) {
	var res R
	err := c.retry(ctx, c.pace, what, func(ctx context.Context) error {
		var err error
		res, err = do(ctx)
		return err
	})
	if code, ok := statusOf(err); ok && code == http.StatusNotFound {
		return res, ErrNoData
	}
	return res, err
}
