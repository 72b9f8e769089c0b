package api

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

// FieldReports reads real-user reports.
type FieldReports interface {
	Report(ctx context.Context, q rum.Query) (rum.Report, error)
}

// defaultFieldDays is the default range of the field-data reports.
const defaultFieldDays = 30

// fieldReport answers {"result": {"count": n, "list": {key: {count, percent, metrics...}}}}.
// count is the number of distinct pages for the plain pages report and the total page views
// otherwise.
func (s *Server) fieldReport(dim string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c caller) error {
		site, err := s.website(r, c)
		if err != nil {
			return err
		}
		metrics, err := timingMetrics(r)
		if err != nil {
			return err
		}
		from, to, err := s.dateRange(r, defaultFieldDays)
		if err != nil {
			return err
		}
		rep, err := s.field.Report(r.Context(), rum.Query{Account: site.Account, Website: site.ID, Dim: dim,
			Metrics: metrics, From: from, To: to})
		var unknown *rum.UnknownMetricError
		if errors.As(err, &unknown) {
			return badRequest(unknown.Error(), model.FieldError{Field: "timing", Message: fmt.Sprintf("unknown metric %q", unknown.Name)})
		}
		if err != nil {
			return err
		}
		items := make(map[string]map[string]any, len(rep.Rows))
		for _, row := range rep.Rows {
			item := map[string]any{"count": row.Views, "percent": shareOf(row.Views, rep.Views)}
			for m, v := range row.P75 {
				item[m] = rum.Round(m, v)
			}
			items[row.Key] = item
		}
		count := rep.Views
		if dim == rum.DimPages && len(metrics) == 0 {
			count = rep.Pages
		}
		return writeJSON(w, http.StatusOK, map[string]any{"result": map[string]any{"count": count, "list": items}})
	}
}

// timingMetrics reads timing=m1+m2: a "+" in a query string arrives as a space, so spaces,
// plus signs and commas all separate names. Names are checked against the custom variables
// the website sent by the report itself.
func timingMetrics(r *http.Request) ([]string, error) {
	vals, ok := r.URL.Query()["timing"]
	if !ok {
		return nil, nil
	}
	var names []string
	for _, v := range vals {
		for _, name := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == '+' || r == ',' }) {
			name = strings.ToLower(name)
			if _, std := rum.Metrics[name]; !std && !rum.IsCustomName(name) {
				return nil, badRequest(fmt.Sprintf("unknown timing metric %q", name),
					model.FieldError{Field: "timing", Message: "unknown metric"})
			}
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return nil, badRequest("timing names no metric", model.FieldError{Field: "timing", Message: "names no metric"})
	}
	if len(names) > 20 {
		return nil, badRequest("timing names more than 20 metrics", model.FieldError{Field: "timing", Message: "at most 20 metrics"})
	}
	return names, nil
}

// shareOf is n's share of total, in percent with two decimals.
func shareOf(n, total uint64) float64 {
	if total == 0 {
		return 0
	}
	return math.Round(float64(n)*10000/float64(total)) / 100
}
