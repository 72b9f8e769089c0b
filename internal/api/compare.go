package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
)

// comparisonJSON is two audits of a page on a device side by side.
type comparisonJSON struct {
	Page    pageRefJSON         `json:"page"`
	Device  string              `json:"device"`
	Base    auditRefJSON        `json:"base"`
	Target  auditRefJSON        `json:"target"`
	Metrics []metricCompareJSON `json:"metrics"`
}

// auditRefJSON names one compared audit: its day or its test.
type auditRefJSON struct {
	Date      string     `json:"date,omitempty"`
	Test      string     `json:"test,omitempty"`
	AuditedAt *time.Time `json:"auditedAt"`
	Runs      int        `json:"runs"`
}

type metricCompareJSON struct {
	Name          string   `json:"name"`
	Unit          string   `json:"unit,omitempty"`
	HigherIsWorse *bool    `json:"higherIsWorse,omitempty"`
	Base          *float64 `json:"base"`
	Target        *float64 `json:"target"`
	Change        *float64 `json:"change"`
	ChangePercent *float64 `json:"changePercent"`
	BaseSpread    *float64 `json:"baseSpread"`
	TargetSpread  *float64 `json:"targetSpread"`
	BeyondSpread  bool     `json:"beyondSpread"`
}

// auditRef reads the query parameter name: a day (yyyy-MM-dd) or a test series' test ID.
func auditRef(r *http.Request, name string, errs *fieldErrors) compare.Ref {
	v := r.URL.Query().Get(name)
	switch {
	case v == "":
		errs.add(name, "is required: a day (yyyy-MM-dd) or a test's ID (tt_...)")
	case strings.HasPrefix(v, "tt_") && len(v) <= 100:
		return compare.Ref{Test: v}
	default:
		if t, err := time.Parse(time.DateOnly, v); err == nil && len(v) == len(time.DateOnly) {
			return compare.Ref{Day: model.Day(t)}
		}
		errs.add(name, "must be a day (yyyy-MM-dd) or a test's ID (tt_...)")
	}
	return compare.Ref{}
}

// comparePage answers two audits of a page on a device side by side: each a day's lab result
// or a test series' test.
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request, c caller) error {
	var errs fieldErrors
	base, target := auditRef(r, "base", &errs), auditRef(r, "target", &errs)
	if len(errs) > 0 {
		return badRequest("base and target must each name an audit of the page", errs...)
	}
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return err
	}
	pair, err := s.audits.Compare(r.Context(), site, p.ID, device, base, target, regression.SourceMetrics[regression.SourceLab])
	if err != nil {
		return err
	}
	out := comparisonJSON{Page: pageRefJSON{ID: p.ID, URL: p.URL, Alias: p.Alias}, Device: device,
		Base: toAuditRefJSON(pair.Base), Target: toAuditRefJSON(pair.Target), Metrics: []metricCompareJSON{}}
	for _, m := range pair.Metrics {
		mj := metricCompareJSON{Name: m.Name, Base: m.Base, Target: m.Target, Change: m.Delta, ChangePercent: m.Percent,
			BaseSpread: m.BaseSpread, TargetSpread: m.TargetSpread, BeyondSpread: m.BeyondSpread}
		if watched, ok := regression.Lookup(m.Name); ok {
			mj.Unit, mj.HigherIsWorse = watched.Unit, &watched.HigherIsWorse
		}
		out.Metrics = append(out.Metrics, mj)
	}
	return writeJSON(w, http.StatusOK, out)
}

func toAuditRefJSON(l compare.Loaded) auditRefJSON {
	out := auditRefJSON{Date: model.DayToISO(l.Day), Test: l.Test, Runs: l.Runs}
	if !l.Audited.IsZero() {
		at := l.Audited.UTC()
		out.AuditedAt = &at
	}
	return out
}
