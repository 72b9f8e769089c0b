package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/rum"
)

// SegmentReports reads the real-user reports over segments and attributions.
type SegmentReports interface {
	Trend(ctx context.Context, q rum.SegmentQuery) (rum.Trend, error)
	Distribution(ctx context.Context, q rum.SegmentQuery) (rum.Distribution, error)
	Breakdown(ctx context.Context, q rum.SegmentQuery) (rum.Breakdown, error)
	Attributions(ctx context.Context, q rum.SegmentQuery, limit int) (rum.Attributions, error)
}

// segmentQueryParams are the query parameters the segment reports take besides the filters
// (one per dimension).
var segmentQueryParams = []string{"metric", "percentile", "date", "page", "by", "limit"}

// segmentQuery reads a segment report's query: metric (required), percentile, date range,
// page (a monitored page of the website), by and one filter per dimension (comma-separated
// values). Unknown parameters are refused, so that a typo is not silently a report of
// everything.
func (s *Server) segmentQuery(r *http.Request, c caller) (rum.SegmentQuery, error) {
	site, err := s.website(r, c)
	if err != nil {
		return rum.SegmentQuery{}, err
	}
	values := r.URL.Query()
	var errs []model.FieldError
	for name := range values {
		if _, dim := rum.DimByName(name); !dim && !containsString(segmentQueryParams, name) {
			errs = append(errs, model.FieldError{Field: name, Message: "unknown parameter"})
		}
	}
	q := rum.SegmentQuery{Account: site.Account, Website: site.ID, Metric: strings.ToLower(values.Get("metric"))}
	if _, ok := rum.VitalIndex(q.Metric); !ok {
		errs = append(errs, model.FieldError{Field: "metric", Message: "one of lcp, inp, cls, fcp, ttfb"})
	}
	if p := values.Get("percentile"); p != "" {
		f, ok := finiteNumber(p)
		if !ok || f < 1 || f > 99 {
			errs = append(errs, model.FieldError{Field: "percentile", Message: "a number from 1 to 99"})
		}
		q.Percentile = f
	}
	if by := values.Get("by"); by != "" {
		d, ok := rum.DimByName(by)
		if !ok {
			errs = append(errs, model.FieldError{Field: "by", Message: "one of " + dimList()})
		}
		q.By = d
	}
	for _, d := range rum.Dims {
		v := values.Get(d.Name)
		if v == "" {
			continue
		}
		f := rum.Filter{Dim: d}
		for _, name := range strings.Split(v, ",") {
			if name = strings.TrimSpace(name); name != "" {
				f.Values = append(f.Values, name)
			}
		}
		if d != rum.DimGroup && d != rum.DimCountry {
			for _, name := range f.Values {
				if _, ok := d.Value(name); !ok {
					errs = append(errs, model.FieldError{Field: d.Name, Message: fmt.Sprintf("%q is not one of %s", name, strings.Join(d.Values(), ", "))})
				}
			}
		}
		q.Filters = append(q.Filters, f)
	}
	if len(errs) > 0 {
		return q, badRequest("the report's query is not valid: "+model.FieldErrors(errs).String(), errs...)
	}
	if q.From, q.To, err = s.dateRange(r, defaultFieldDays); err != nil {
		return q, err
	}
	if id := values.Get("page"); id != "" {
		if _, err := s.store.Page(r.Context(), site, id); err != nil {
			if isNotFound(err) {
				return q, newProblem(http.StatusNotFound, "no such page")
			}
			return q, err
		}
		q.Page = id
	}
	return q, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func dimList() string {
	var names []string
	for _, d := range rum.Dims {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}

// segmentReport reads a segment report's query, then the report read reads over it.
func segmentReport[T any](s *Server, r *http.Request, c caller, read func(context.Context, rum.SegmentQuery) (T, error)) (rum.SegmentQuery, T, error) {
	var report T
	q, err := s.segmentQuery(r, c)
	if err != nil {
		return q, report, err
	}
	if report, err = read(r.Context(), q); err != nil {
		return q, report, reportError(err)
	}
	return q, report, nil
}

// reportError turns the reader's refusals into problems.
func reportError(err error) error {
	var qe *rum.QueryError
	if errors.As(err, &qe) {
		return badRequest(qe.Error(), model.FieldError{Field: qe.Field, Message: qe.Message})
	}
	return err
}

// vitalInfo is what every segment report says of its metric.
func vitalInfo(q rum.SegmentQuery) map[string]any {
	i, _ := rum.VitalIndex(q.Metric)
	v := rum.Vitals[i]
	unit := "ms"
	if v.Name == "cls" {
		unit = "score"
	}
	p := q.Percentile
	if p == 0 {
		p = 75
	}
	return map[string]any{"metric": v.Name, "percentile": p, "unit": unit, "source": "real users",
		"thresholds": map[string]float64{"good": v.Good, "poor": v.Poor}}
}

// summaryJSON writes a summary: views, the percentile (absent without views) and ratings.
func summaryJSON(out map[string]any, s rum.Summary) map[string]any {
	out["views"] = s.Views
	if s.Views > 0 {
		out["value"] = s.Value
	}
	ratings := map[string]any{}
	for i, name := range []string{"good", "needsImprovement", "poor"} {
		ratings[name] = map[string]any{"views": s.Rated[i], "percent": shareOf(s.Rated[i], s.Views)}
	}
	out["ratings"] = ratings
	return out
}

// fieldTrend answers a vital's percentile and ratings day by day.
func (s *Server) fieldTrend(w http.ResponseWriter, r *http.Request, c caller) error {
	q, t, err := segmentReport(s, r, c, s.segments.Trend)
	if err != nil {
		return err
	}
	days := func(ds []rum.TrendDay) []map[string]any {
		out := make([]map[string]any, len(ds))
		for i, d := range ds {
			out[i] = summaryJSON(map[string]any{"date": d.Day}, d.Summary)
		}
		return out
	}
	res := vitalInfo(q)
	res["days"] = days(t.Days)
	res["partial"] = t.Partial
	if q.By != nil {
		res["by"] = q.By.Name
		series := make([]map[string]any, len(t.Series))
		for i, se := range t.Series {
			series[i] = map[string]any{"key": se.Key, "days": days(se.Days)}
		}
		res["series"] = series
	}
	return writeJSON(w, http.StatusOK, map[string]any{"result": res})
}

// fieldDistribution answers a vital's percentiles, ratings and histogram over the range.
func (s *Server) fieldDistribution(w http.ResponseWriter, r *http.Request, c caller) error {
	q, d, err := segmentReport(s, r, c, s.segments.Distribution)
	if err != nil {
		return err
	}
	res := summaryJSON(vitalInfo(q), d.Summary)
	res["percentiles"] = d.Percentiles
	hist := make([]map[string]any, len(d.Histogram))
	for i, b := range d.Histogram {
		hist[i] = map[string]any{"from": b.From, "views": b.Views}
		if b.To > 0 {
			hist[i]["to"] = b.To
		}
	}
	res["histogram"] = hist
	res["partial"] = d.Partial
	return writeJSON(w, http.StatusOK, map[string]any{"result": res})
}

// fieldSegments answers a vital per key of a dimension.
func (s *Server) fieldSegments(w http.ResponseWriter, r *http.Request, c caller) error {
	q, b, err := segmentReport(s, r, c, s.segments.Breakdown)
	if err != nil {
		return err
	}
	res := summaryJSON(vitalInfo(q), b.Total)
	res["by"] = q.By.Name
	list := make([]map[string]any, len(b.Rows))
	for i, row := range b.Rows {
		list[i] = summaryJSON(map[string]any{"key": row.Key, "percent": shareOf(row.Views, b.Total.Views)}, row.Summary)
	}
	res["list"] = list
	res["partial"] = b.Partial
	return writeJSON(w, http.StatusOK, map[string]any{"result": res})
}

// attributionLists name each kind's list in the answer.
var attributionLists = map[string]string{"lcp": "elements", "inp": "targets", "script": "scripts", "entity": "entities", "cls": "targets", "bfcache": "notRestoredReasons", "start": "softNavigationStarts"}

// fieldAttributions answers a vital's top attributions.
func (s *Server) fieldAttributions(w http.ResponseWriter, r *http.Request, c caller) error {
	q, err := s.segmentQuery(r, c)
	if err != nil {
		return err
	}
	limit := 10
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 50 {
			return badRequest("limit must be from 1 to 50", model.FieldError{Field: "limit", Message: "must be from 1 to 50"})
		}
		limit = n
	}
	a, err := s.segments.Attributions(r.Context(), q, limit)
	if err != nil {
		return reportError(err)
	}
	res := vitalInfo(q)
	res["views"] = a.Views
	res["slowViews"] = a.SlowViews
	res["partial"] = a.Partial
	for kind, rows := range a.Kinds {
		list := make([]map[string]any, len(rows))
		for i, row := range rows {
			item := map[string]any{"views": row.Views, "slowViews": row.SlowViews, "slowPercent": shareOf(row.SlowViews, a.SlowViews),
				"value": row.Value, "mean": row.Mean}
			for name, v := range row.Fields {
				item[name] = v
			}
			if len(row.Parts) > 0 {
				item["parts"] = row.Parts
			}
			list[i] = item
		}
		res[attributionLists[kind]] = list
	}
	if len(a.Unfiltered) > 0 {
		left := map[string]string{}
		for kind, why := range a.Unfiltered {
			left[attributionLists[kind]] = why
		}
		res["leftOut"] = left
	}
	return writeJSON(w, http.StatusOK, map[string]any{"result": res})
}

// rumSettingsJSON is the settings as the API shows and takes them.
type rumSettingsJSON struct {
	Groups           []rumGroupJSON `json:"groups"`
	SampleRate       float64        `json:"sampleRate"`
	ExcludeLabAgents bool           `json:"excludeLabAgents"`
}

type rumGroupJSON struct {
	// ID is given by the service and read-only; sending it back changes nothing.
	ID      int    `json:"id,omitempty"`
	Name    string `json:"name"`
	Pattern string `json:"pattern"`
}

func settingsJSON(set model.RUMSettings) rumSettingsJSON {
	out := rumSettingsJSON{Groups: []rumGroupJSON{}, SampleRate: 1 / float64(set.Weight()), ExcludeLabAgents: set.ExcludeLabAgents}
	for _, g := range set.Groups {
		out.Groups = append(out.Groups, rumGroupJSON{ID: g.ID, Name: g.Name, Pattern: g.Pattern})
	}
	return out
}

// getRUMSettings answers the website's real-user monitoring settings.
func (s *Server) getRUMSettings(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	set, err := s.store.RUMSettings(r.Context(), site.Account, site.ID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, settingsJSON(set))
}

// putRUMSettings replaces the website's page groups, sample rate and lab agent choice.
func (s *Server) putRUMSettings(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[rumSettingsJSON](s, w, r, c)
	if err != nil {
		return err
	}
	old, err := s.store.RUMSettings(r.Context(), site.Account, site.ID)
	if err != nil {
		return err
	}
	want := model.RUMSettings{SampleRate: in.SampleRate, ExcludeLabAgents: in.ExcludeLabAgents}
	for _, g := range in.Groups {
		want.Groups = append(want.Groups, model.PageGroup{Name: g.Name, Pattern: g.Pattern})
	}
	set, err := rum.ApplySettings(old, want)
	if err != nil {
		return err
	}
	if err := s.store.PutRUMSettings(r.Context(), site.Account, site.ID, set); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, settingsJSON(set))
}
