package api

import (
	"context"
	"net/http"
	"time"

	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/model"
)

// Exporter writes a website's Parquet export of a UTC day (yyyymmdd); *export.Exporter is one.
type Exporter interface {
	Website(ctx context.Context, site model.Website, day string) (export.Result, error)
}

// dataSettingsJSON is a website's data settings as the API shows and takes them: retention
// fields of 0 (or absent) take the default, which the answer shows resolved beside.
type dataSettingsJSON struct {
	Exports   bool            `json:"exports"`
	Retention model.Retention `json:"retention"`
}

type dataSettingsAnswer struct {
	dataSettingsJSON
	// Effective is the retention applied: each default resolved, in days.
	Effective model.Retention `json:"effective"`
	// Limits are the least and most days of each kind in this deployment.
	Limits retentionLimitsJSON `json:"limits"`
	// ExportsSince is the first day exported (yyyy-MM-dd; absent: none yet).
	ExportsSince string `json:"exportsSince,omitempty"`
}

type limitJSON struct {
	Min     int `json:"min"`
	Default int `json:"default"`
	Max     int `json:"max"`
}

type retentionLimitsJSON struct {
	Reports limitJSON `json:"reports"`
	Series  limitJSON `json:"series"`
	RUM     limitJSON `json:"rum"`
	Events  limitJSON `json:"events"`
	Exports limitJSON `json:"exports"`
}

func (s *Server) dataSettingsAnswer(set model.DataSettings) dataSettingsAnswer {
	b := s.retention
	l := func(x model.RetentionLimits) limitJSON { return limitJSON{x.Min, x.Default, x.Max} }
	a := dataSettingsAnswer{dataSettingsJSON: dataSettingsJSON{Exports: set.Exports, Retention: set.Retention},
		Effective: set.Retention.Resolved(b),
		Limits:    retentionLimitsJSON{l(b.Reports), l(b.Series), l(b.RUM), l(b.Events), l(b.Exports)}}
	if set.ExportsSince != "" {
		a.ExportsSince = isoDate(set.ExportsSince)
	}
	return a
}

func isoDate(day string) string {
	d, err := time.Parse(model.DayLayout, day)
	if err != nil {
		return day
	}
	return d.Format(time.DateOnly)
}

// getDataSettings answers a website's data settings: exports on or off, retention per kind.
func (s *Server) getDataSettings(w http.ResponseWriter, r *http.Request, c caller) error {
	_, set, err := websiteAnd(s, r, c, s.store.DataSettings)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.dataSettingsAnswer(set))
}

// putDataSettings replaces a website's data settings. A retention outside the deployment's
// limits is a 422 naming each bad field, and changes nothing; a shorter retention removes what
// is past it at the website's next daily retention pass.
func (s *Server) putDataSettings(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[dataSettingsJSON](s, w, r, c)
	if err != nil {
		return err
	}
	if err := in.Retention.Check(s.retention).Err(); err != nil {
		return err
	}
	if err := s.store.PutDataSettings(r.Context(), site, in.Exports, in.Retention); err != nil {
		return err
	}
	set, err := s.store.DataSettings(r.Context(), site)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.dataSettingsAnswer(set))
}

// exportJSON is what an export on demand wrote.
type exportJSON struct {
	Day   string         `json:"day"`
	Rows  map[string]int `json:"rows"`
	Bytes int            `json:"bytes"`
	Keys  []string       `json:"keys"`
}

// createExport writes a website's Parquet export of one day now ({"day": "yyyy-MM-dd"};
// absent: yesterday), replacing what was written of that day, whether or not the daily export
// is on.
func (s *Server) createExport(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[struct {
		Day *string `json:"day"`
	}](s, w, r, c)
	if err != nil {
		return err
	}
	today := s.now().Truncate(24 * time.Hour)
	day := today.AddDate(0, 0, -1)
	if in.Day != nil {
		d, err := time.Parse(time.DateOnly, *in.Day)
		var errs model.FieldErrors
		switch {
		case err != nil:
			errs.Add("day", "must be a date, yyyy-MM-dd")
		case d.After(today):
			errs.Add("day", "must not be after today (UTC)")
		case d.Before(today.AddDate(0, 0, -model.HistoryDays)):
			errs.Add("day", "must be within the last %d days, the history kept", model.HistoryDays)
		}
		if err := errs.Err(); err != nil {
			return err
		}
		day = d
	}
	if s.exports == nil {
		return newProblem(http.StatusServiceUnavailable, "exports are not configured in this deployment")
	}
	res, err := s.exports.Website(r.Context(), site, day.Format(model.DayLayout))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, exportJSON{Day: day.Format(time.DateOnly), Rows: res.Rows, Bytes: res.Bytes, Keys: res.Keys})
}
