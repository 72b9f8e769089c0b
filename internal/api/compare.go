package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
)

// comparisonJSON is two audits of a page on a device side by side.
type comparisonJSON struct {
	Page    model.Page       `json:"page"`
	Device  string           `json:"device"`
	Base    auditRefJSON     `json:"base"`
	Target  auditRefJSON     `json:"target"`
	Metrics []compare.Metric `json:"metrics"`
	// Loads is what changed in the load; null unless both audits kept their diagnostics.
	Loads *loadsJSON `json:"loads"`
}

// loadsJSON is what changed in the load: compare.Loads with the filmstrip's frames as URLs, the
// requests flat and every shift's lists present.
type loadsJSON struct {
	Filmstrip         filmstripJSON       `json:"filmstrip"`
	Requests          []requestChangeJSON `json:"requests"`
	UnchangedRequests int                 `json:"unchangedRequests"`
	LCP               compare.LCPChange   `json:"lcp"`
	LayoutShifts      []shiftChangeJSON   `json:"layoutShifts"`
	LongTasks         compare.LongTasks   `json:"longTasks"`
}

type filmstripJSON struct {
	Step        float64     `json:"step"`
	End         float64     `json:"end"`
	BaseMarks   model.Marks `json:"baseMarks"`
	TargetMarks model.Marks `json:"targetMarks"`
	Slots       []slotJSON  `json:"slots"`
}

type frameJSON struct {
	Time float64 `json:"time"`
	URL  string  `json:"url"`
}

type slotJSON struct {
	Time          float64    `json:"time"`
	Base          *frameJSON `json:"base"`
	Target        *frameJSON `json:"target"`
	BaseChanged   bool       `json:"baseChanged"`
	TargetChanged bool       `json:"targetChanged"`
}

// requestTimingJSON is a changed request in one load.
type requestTimingJSON struct {
	URL          string  `json:"url"`
	Start        float64 `json:"start"`
	End          float64 `json:"end"`
	TransferSize int64   `json:"transferSize"`
}

type requestChangeJSON struct {
	Kind           string             `json:"kind"`
	URL            string             `json:"url"`
	ResourceType   string             `json:"resourceType"`
	ThirdParty     bool               `json:"thirdParty"`
	Entity         string             `json:"entity,omitempty"`
	RenderBlocking bool               `json:"renderBlocking"`
	Base           *requestTimingJSON `json:"base"`
	Target         *requestTimingJSON `json:"target"`
	SizeChange     int64              `json:"sizeChange"`
	TimeChange     float64            `json:"timeChange"`
}

type shiftChangeJSON struct {
	Time      float64            `json:"time"`
	Score     float64            `json:"score"`
	BaseScore float64            `json:"baseScore"`
	Elements  []model.Element    `json:"elements"`
	Causes    []model.ShiftCause `json:"causes"`
}

// auditRefJSON names one compared audit: its day or its test.
type auditRefJSON struct {
	Date      string     `json:"date,omitempty"`
	Test      string     `json:"test,omitempty"`
	AuditedAt *time.Time `json:"auditedAt"`
	Runs      int        `json:"runs"`
	Method    string     `json:"method,omitempty"`
}

// withUnits gives compared metrics each its unit and direction when it is a watched metric.
func withUnits(metrics []compare.Metric) []compare.Metric {
	for i, m := range metrics {
		if watched, ok := regression.Lookup(m.Name); ok {
			metrics[i].Unit, metrics[i].HigherIsWorse = watched.Unit, &watched.HigherIsWorse
		}
	}
	return metrics
}

// auditID names an audit of a page on a device: a day's lab result (Day, yyyymmdd) or a test
// series' test (Test, its ID). Exactly one is set.
type auditID struct {
	Day  string
	Test string
}

// auditRef reads the query parameter name: a day (yyyy-MM-dd) or a test series' test ID.
func auditRef(r *http.Request, name string, errs *model.FieldErrors) auditID {
	v := r.URL.Query().Get(name)
	switch {
	case v == "":
		errs.Add(name, "is required: a day (yyyy-MM-dd) or a test's ID (tt_...)")
	case strings.HasPrefix(v, "tt_") && len(v) <= 100:
		return auditID{Test: v}
	default:
		if t, err := time.Parse(time.DateOnly, v); err == nil && len(v) == len(time.DateOnly) {
			return auditID{Day: model.Day(t)}
		}
		errs.Add(name, "must be a day (yyyy-MM-dd) or a test's ID (tt_...)")
	}
	return auditID{}
}

// storedAudit is an audit read for a comparison: what identifies it and what is compared.
type storedAudit struct {
	auditID
	Audited time.Time
	Runs    int
	// Method is the audit's measurement method (model.MethodOr read).
	Method string
	compare.Audit
}

// storedAudit reads the audit id of a page on a device, with its diagnostics when it kept
// them: model.ErrNotFound when there is none (no result that day, an unknown test, a test of
// another page or device, or one that measured nothing).
func (s *Server) storedAudit(ctx context.Context, site model.Website, page, device string, id auditID) (storedAudit, error) {
	var out storedAudit
	var reportKey string
	if id.Test != "" {
		t, err := s.store.SeriesTest(ctx, site, id.Test)
		if err != nil {
			return out, err
		}
		if t.Page != page || t.Device != device || len(t.Metrics) == 0 {
			return out, fmt.Errorf("test %s of this page on %s: %w", id.Test, device, model.ErrNotFound)
		}
		out = storedAudit{auditID: id, Runs: 1, Method: model.MethodOr(t.Method, ""), Audit: compare.Audit{Metrics: t.Metrics}}
		if t.Finished != nil {
			out.Audited = *t.Finished
		}
		reportKey = t.ReportKey
	} else {
		results, err := s.store.LabResults(ctx, site, page, device, id.Day, id.Day)
		if err != nil {
			return out, err
		}
		if len(results) == 0 {
			return out, fmt.Errorf("lab result of %s on %s: %w", model.DayToISO(id.Day), device, model.ErrNotFound)
		}
		r := results[0]
		out = storedAudit{auditID: id, Audited: r.Audited, Runs: r.Runs, Method: model.MethodOr(r.Method, ""),
			Audit: compare.Audit{Metrics: r.Metrics, Samples: r.Samples}}
		reportKey = r.ReportKey
	}
	var err error
	out.Diagnostics, err = s.diagnosticsOrNone(ctx, reportKey)
	return out, err
}

// diagnosticsOrNone reads the diagnostics of the audit whose report is at reportKey; nil when
// it kept none (a comparison of such audits compares their metrics only).
func (s *Server) diagnosticsOrNone(ctx context.Context, reportKey string) (*model.Diagnostics, error) {
	d, err := s.artifacts.Diagnostics(ctx, reportKey)
	if isNotFound(err) {
		return nil, nil
	}
	return d, err
}

// comparePage answers two audits of a page on a device side by side: each a day's lab result
// or a test series' test.
func (s *Server) comparePage(w http.ResponseWriter, r *http.Request, c caller) error {
	var errs model.FieldErrors
	base, target := auditRef(r, "base", &errs), auditRef(r, "target", &errs)
	if len(errs) > 0 {
		return badRequest("base and target must each name an audit of the page", errs...)
	}
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return err
	}
	b, err := s.storedAudit(r.Context(), site, p.ID, device, base)
	if err != nil {
		return err
	}
	t, err := s.storedAudit(r.Context(), site, p.ID, device, target)
	if err != nil {
		return err
	}
	both := compare.Of(b.Audit, t.Audit, regression.SourceMetrics[regression.SourceLab])
	out := comparisonJSON{Page: p, Device: device,
		Base: toAuditRefJSON(b), Target: toAuditRefJSON(t), Metrics: withUnits(both.Metrics)}
	if both.Loads != nil {
		out.Loads = toLoadsJSON(*both.Loads, frameURLs(site, p.ID, device, b), frameURLs(site, p.ID, device, t))
	}
	return writeJSON(w, http.StatusOK, out)
}

// frameURLs is where a client fetches the frames of an audit: a day's diagnostics images (a
// test's frames have no route: their URL is empty).
func frameURLs(site model.Website, page, device string, l storedAudit) func(model.Frame) string {
	if l.Day == "" {
		return func(model.Frame) string { return "" }
	}
	query := "?" + url.Values{"device": {device}, "date": {model.DayToISO(l.Day)}}.Encode()
	images := "/" + site.ID + "/pages/" + page + "/diagnostics/images/"
	return func(f model.Frame) string { return images + url.PathEscape(f.Image) + query }
}

func toLoadsJSON(l compare.Loads, baseURL, targetURL func(model.Frame) string) *loadsJSON {
	out := &loadsJSON{Requests: []requestChangeJSON{}, UnchangedRequests: l.Unchanged, LayoutShifts: []shiftChangeJSON{},
		LCP: l.LCP, LongTasks: l.LongTasks,
		Filmstrip: filmstripJSON{Step: l.Filmstrip.Step, End: l.Filmstrip.End, BaseMarks: l.Filmstrip.BaseMarks,
			TargetMarks: l.Filmstrip.TargetMarks, Slots: []slotJSON{}}}
	frame := func(f *model.Frame, url func(model.Frame) string) *frameJSON {
		if f == nil {
			return nil
		}
		return &frameJSON{Time: f.Time, URL: url(*f)}
	}
	for _, s := range l.Filmstrip.Slots {
		out.Filmstrip.Slots = append(out.Filmstrip.Slots, slotJSON{Time: s.Time, Base: frame(s.Base, baseURL), Target: frame(s.Target, targetURL),
			BaseChanged: s.BaseChanged, TargetChanged: s.TargetChanged})
	}
	timing := func(r *model.Request) *requestTimingJSON {
		if r == nil {
			return nil
		}
		return &requestTimingJSON{URL: r.URL, Start: r.Start, End: r.End, TransferSize: r.TransferSize}
	}
	for _, c := range l.Requests {
		r := c.Request()
		out.Requests = append(out.Requests, requestChangeJSON{Kind: c.Kind, URL: r.URL, ResourceType: r.Type, ThirdParty: r.ThirdParty,
			Entity: r.Entity, RenderBlocking: r.RenderBlocking, Base: timing(c.Base), Target: timing(c.Target),
			SizeChange: c.SizeDelta, TimeChange: c.TimeDelta})
	}
	for _, s := range l.Shifts {
		sj := shiftChangeJSON{Time: s.Time, Score: s.Score, BaseScore: s.BaseScore, Elements: s.Elements, Causes: s.Causes}
		if sj.Elements == nil {
			sj.Elements = []model.Element{}
		}
		if sj.Causes == nil {
			sj.Causes = []model.ShiftCause{}
		}
		out.LayoutShifts = append(out.LayoutShifts, sj)
	}
	return out
}

func toAuditRefJSON(l storedAudit) auditRefJSON {
	out := auditRefJSON{Date: model.DayToISO(l.Day), Test: l.Test, Runs: l.Runs, Method: l.Method}
	if !l.Audited.IsZero() {
		at := l.Audited.UTC()
		out.AuditedAt = &at
	}
	return out
}

// comparisonLinkJSON names the comparison of a lab regression's last good and first bad day:
// the parameters of the compare endpoint and its path.
type comparisonLinkJSON struct {
	Page   string `json:"page"`
	Device string `json:"device"`
	Base   string `json:"base"`
	Target string `json:"target"`
	Path   string `json:"path"`
}

// comparisonLink is the comparison a regression links to: that of its last good and first bad
// day, for a lab regression (nil for other sources, whose days have no audits to compare).
func comparisonLink(site model.Website, r model.Regression) *comparisonLinkJSON {
	if r.Source != regression.SourceLab || r.Page == "" || r.Device == "" {
		return nil
	}
	l := &comparisonLinkJSON{Page: r.Page, Device: r.Device, Base: model.DayToISO(r.LastGood), Target: model.DayToISO(r.FirstBad)}
	q := url.Values{"device": {l.Device}, "base": {l.Base}, "target": {l.Target}}
	l.Path = "/" + url.PathEscape(site.ID) + "/pages/" + url.PathEscape(r.Page) + "/compare?" + q.Encode()
	return l
}
