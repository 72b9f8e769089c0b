package api

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/store"
)

// regressionJSON is a regression as the API shows it.
type regressionJSON struct {
	ID             string           `json:"id"`
	Kind           string           `json:"kind"`
	Source         string           `json:"source"`
	Page           string           `json:"page,omitempty"`
	Device         string           `json:"device,omitempty"`
	Test           string           `json:"test,omitempty"`
	Metric         string           `json:"metric"`
	Unit           string           `json:"unit"`
	LastGoodDay    string           `json:"lastGoodDay"`
	FirstBadDay    string           `json:"firstBadDay"`
	Before         regression.Level `json:"before"`
	After          regression.Level `json:"after"`
	Change         float64          `json:"change"`
	ChangePercent  float64          `json:"changePercent"`
	PValue         float64          `json:"pValue"`
	Status         string           `json:"status"`
	RecoveredDay   string           `json:"recoveredDay,omitempty"`
	DetectedAt     time.Time        `json:"detectedAt"`
	AcknowledgedAt *time.Time       `json:"acknowledgedAt,omitempty"`
	Cause          causeJSON        `json:"cause"`
	// Incident is the incident the regression is part of.
	Incident string `json:"incident,omitempty"`
	// Comparison is the comparison of the last good and first bad day (lab regressions).
	Comparison *comparisonLinkJSON `json:"comparison"`
}

// causeJSON is what changed in the page (lab regressions) and what was annotated between the
// last good and the first bad day.
type causeJSON struct {
	Changes     []causeItemJSON  `json:"changes"`
	Annotations []annotationJSON `json:"annotations"`
}

type causeItemJSON struct {
	Kind   string  `json:"kind"`
	Title  string  `json:"title"`
	URL    string  `json:"url,omitempty"`
	Type   string  `json:"resourceType,omitempty"`
	Party  string  `json:"party,omitempty"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
	Unit   string  `json:"unit,omitempty"`
	Impact float64 `json:"impact"`
}

type annotationJSON struct {
	ID        string    `json:"id"`
	At        time.Time `json:"at"`
	Text      string    `json:"text"`
	URL       string    `json:"url,omitempty"`
	Pages     []string  `json:"pages"`
	CreatedAt time.Time `json:"createdAt"`
}

func toAnnotationJSON(a model.Annotation) annotationJSON {
	out := annotationJSON{ID: a.ID, At: a.At.UTC(), Text: a.Text, URL: a.URL, Pages: a.Pages, CreatedAt: a.Created.UTC()}
	if out.Pages == nil {
		out.Pages = []string{}
	}
	return out
}

// toRegressionJSON shows r with the annotations (newest first) that fall between its last
// good and first bad day and concern its page or the whole website.
func toRegressionJSON(r model.Regression, annotations []model.Annotation) regressionJSON {
	m, _ := regression.Lookup(r.Metric)
	out := regressionJSON{ID: r.ID, Kind: r.Kind, Source: r.Source, Page: r.Page, Device: r.Device, Test: r.Test,
		Metric: r.Metric, Unit: m.Unit, LastGoodDay: model.DayToISO(r.LastGood), FirstBadDay: model.DayToISO(r.FirstBad),
		Before: regression.Level(r.Before), After: regression.Level(r.After), Change: r.Delta, ChangePercent: r.Percent,
		PValue: r.P, Status: r.Status, RecoveredDay: model.DayToISO(r.Recovered), DetectedAt: r.Detected.UTC(),
		AcknowledgedAt: r.Acknowledged, Incident: r.Incident,
		Cause: causeJSON{Changes: []causeItemJSON{}, Annotations: []annotationJSON{}}}
	for _, c := range r.Cause {
		out.Cause.Changes = append(out.Cause.Changes, causeItemJSON(c))
	}
	from, to := annotationWindow(r)
	for _, a := range annotations {
		if a.At.Before(from) || !a.At.Before(to) {
			continue
		}
		if len(a.Pages) > 0 && (r.Page == "" || !slices.Contains(a.Pages, r.Page)) {
			continue
		}
		out.Cause.Annotations = append(out.Cause.Annotations, toAnnotationJSON(a))
	}
	return out
}

// annotationWindow is when an annotation is part of a regression's cause: from the start of
// its last good day to the end of its first bad day (UTC).
func annotationWindow(r model.Regression) (time.Time, time.Time) {
	from, _ := time.Parse(model.DayLayout, r.LastGood)
	to, _ := time.Parse(model.DayLayout, r.FirstBad)
	return from, to.AddDate(0, 0, 1)
}

var regressionStatuses = []string{model.RegressionOpen, model.RegressionRecovered, model.RegressionAcknowledged}

// listRegressions answers a website's regressions and improvements, newest first (by first bad
// day), filtered by status, kind, metric, page, device, test, source and date (the first bad
// day).
func (s *Server) listRegressions(w http.ResponseWriter, r *http.Request, c caller) error {
	win, err := listWindow(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := model.RegressionFilter{Status: q.Get("status"), Kind: q.Get("kind"), Metric: q.Get("metric"),
		Page: q.Get("page"), Device: q.Get("device"), Test: q.Get("test"), Source: q.Get("source")}
	var errs model.FieldErrors
	if f.Status != "" && !slices.Contains(regressionStatuses, f.Status) {
		errs.Add("status", "must be open, recovered or acknowledged")
	}
	if f.Kind != "" && f.Kind != model.KindRegression && f.Kind != model.KindImprovement {
		errs.Add("kind", "must be regression or improvement")
	}
	if _, ok := regression.Lookup(f.Metric); f.Metric != "" && !ok {
		errs.Add("metric", "must be one of %s", strings.Join(regression.MetricNames(), ", "))
	}
	if _, ok := regression.SourceMetrics[f.Source]; f.Source != "" && !ok {
		errs.Add("source", "must be lab, ux, ux_weekly, rum or multistep")
	}
	if f.Device != "" && f.Device != "desktop" && f.Device != "mobile" {
		errs.Add("device", "must be desktop or mobile")
	}
	if len(errs) > 0 {
		return badRequest("a query parameter has a value the list does not know", errs...)
	}
	if f.From, f.To, err = s.dayFilter(r); err != nil {
		return err
	}
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	regs, more, err := s.store.Regressions(r.Context(), site, f, win.after, win.limit)
	if err != nil {
		return err
	}
	if regs, err = s.withIncidents(r, site, regs); err != nil {
		return err
	}
	annotations, err := s.annotationsFor(r, site, regs)
	if err != nil {
		return err
	}
	out := make([]regressionJSON, len(regs))
	for i, reg := range regs {
		out[i] = toRegressionJSON(reg, annotations)
		out[i].Comparison = comparisonLink(site, reg)
	}
	next := ""
	if more {
		next = cursorAfter(regs[len(regs)-1].ID)
	}
	return writeJSON(w, http.StatusOK, listPage(out, next))
}

// annotationsFor reads the annotations that can be part of the regressions' causes: one query
// over the days they span.
func (s *Server) annotationsFor(r *http.Request, site model.Website, regs []model.Regression) ([]model.Annotation, error) {
	if len(regs) == 0 {
		return nil, nil
	}
	from, to := annotationWindow(regs[0])
	for _, reg := range regs[1:] {
		f, t := annotationWindow(reg)
		from, to = minTime(from, f), maxTime(to, t)
	}
	all, _, err := s.store.Annotations(r.Context(), site, from, to, "", 0)
	return all, err
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (s *Server) getRegression(w http.ResponseWriter, r *http.Request, c caller) error {
	site, reg, err := websiteAnd(s, r, c, withPathID(r, "regressionID", s.store.Regression))
	if err != nil {
		return err
	}
	return s.writeRegression(w, r, site, reg)
}

// withIncidents names the incident of regressions stored before incidents were (grouping
// the website's regressions as the incidents list does).
func (s *Server) withIncidents(r *http.Request, site model.Website, regs []model.Regression) ([]model.Regression, error) {
	if !slices.ContainsFunc(regs, func(reg model.Regression) bool { return reg.Incident == "" }) {
		return regs, nil
	}
	all, err := s.incidents(r.Context(), site)
	if err != nil {
		return nil, err
	}
	of := map[string]string{}
	for _, in := range all {
		for _, m := range in.Members {
			of[m.ID] = in.ID
		}
	}
	regs = slices.Clone(regs)
	for i := range regs {
		regs[i].Incident = of[regs[i].ID]
	}
	return regs, nil
}

// writeRegression answers one regression with the annotations of its cause.
func (s *Server) writeRegression(w http.ResponseWriter, r *http.Request, site model.Website, reg model.Regression) error {
	regs, err := s.withIncidents(r, site, []model.Regression{reg})
	if err != nil {
		return err
	}
	reg = regs[0]
	annotations, err := s.annotationsFor(r, site, []model.Regression{reg})
	if err != nil {
		return err
	}
	out := toRegressionJSON(reg, annotations)
	out.Comparison = comparisonLink(site, reg)
	return writeJSON(w, http.StatusOK, out)
}

// updateRegression acknowledges a regression: {"status": "acknowledged"}. An open regression
// becomes acknowledged (no more reminders); a recovered one stays recovered.
func (s *Server) updateRegression(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[struct {
		Status *string `json:"status"`
	}](s, w, r, c)
	if err != nil {
		return err
	}
	if in.Status == nil || *in.Status != model.RegressionAcknowledged {
		return badRequest("a regression can only be acknowledged: send {\"status\": \"acknowledged\"}",
			model.FieldError{Field: "status", Message: "must be acknowledged"})
	}
	reg, err := s.store.AcknowledgeRegression(r.Context(), site, r.PathValue("regressionID"), s.now())
	if err != nil {
		return err
	}
	return s.writeRegression(w, r, site, reg)
}

// getRegressionThresholds answers the least change of every watched metric in effect for the
// website, and which of them are its own.
func (s *Server) getRegressionThresholds(w http.ResponseWriter, r *http.Request, c caller) error {
	_, own, err := websiteAnd(s, r, c, s.store.RegressionThresholds)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, thresholdsJSON(own))
}

type thresholdJSON struct {
	regression.Threshold
	Custom bool `json:"custom"`
}

func thresholdsJSON(own map[string]model.RegressionThreshold) map[string]thresholdJSON {
	t := regression.Thresholds{}
	for name, th := range own {
		t[name] = regression.Threshold{Relative: th.Relative, Absolute: th.Absolute}
	}
	out := map[string]thresholdJSON{}
	for name, th := range t.Resolved() {
		_, custom := own[name]
		out[name] = thresholdJSON{Threshold: th, Custom: custom}
	}
	return out
}

// putRegressionThresholds replaces the website's own least changes: a map of metric to
// {"relative", "absolute"}; metrics left out take the defaults again.
func (s *Server) putRegressionThresholds(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[map[string]regression.Threshold](s, w, r, c)
	if err != nil {
		return err
	}
	if err := thresholdsProblem(regression.Thresholds(in).Validate()); err != nil {
		return err
	}
	own := map[string]model.RegressionThreshold{}
	for name, th := range in {
		own[name] = model.RegressionThreshold{Relative: th.Relative, Absolute: th.Absolute}
	}
	if err := s.store.PutRegressionThresholds(r.Context(), site, own); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, thresholdsJSON(own))
}

// thresholdsProblem turns what Validate found into a problem naming each field: unknown
// metrics are unknown fields (400), the rest values out of their range (422).
func thresholdsProblem(err error) error {
	var bad regression.ThresholdError
	if !errors.As(err, &bad) {
		return err
	}
	fields := make([]model.FieldError, len(bad))
	unknown := false
	for i, p := range bad {
		fields[i] = model.FieldError{Field: p.Field, Message: p.Message}
		unknown = unknown || p.Unknown
	}
	if unknown {
		return badRequest("unknown metric: "+bad.Error(), fields...)
	}
	return invalid(fields...)
}

// The longest text and url an annotation takes, in characters.
const (
	maxAnnotationText = 500
	maxAnnotationURL  = 2000
)

// createAnnotation records a deploy or any other event: at (RFC 3339; now when left out),
// text, an optional url and the pages it concerns (none: the whole website).
func (s *Server) createAnnotation(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[struct {
		At    *time.Time `json:"at"`
		Text  *string    `json:"text"`
		URL   *string    `json:"url"`
		Pages []string   `json:"pages"`
	}](s, w, r, c)
	if err != nil {
		return err
	}
	a := model.Annotation{ID: "ann_" + model.NewID(), At: s.now(), Created: s.now()}
	var errs model.FieldErrors
	if in.At != nil {
		a.At = in.At.UTC()
		if a.At.Year() < 2000 || a.At.After(s.now().Add(24*time.Hour)) {
			errs.Add("at", "must be a time from 2000 to tomorrow")
		}
	}
	if in.Text == nil || strings.TrimSpace(*in.Text) == "" {
		errs.Add("text", "is required")
	} else if a.Text = strings.TrimSpace(*in.Text); utf8.RuneCountInString(a.Text) > maxAnnotationText {
		errs.Add("text", "must be at most %d characters", maxAnnotationText)
	}
	if in.URL != nil {
		u, err := url.Parse(*in.URL)
		switch {
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			errs.Add("url", "must be an http or https URL")
		case utf8.RuneCountInString(*in.URL) > maxAnnotationURL:
			errs.Add("url", "must be at most %d characters", maxAnnotationURL)
		}
		a.URL = *in.URL
	}
	if len(in.Pages) > 100 {
		errs.Add("pages", "must be at most 100 page IDs")
	}
	if err := errs.Err(); err != nil {
		return err
	}
	for i, id := range in.Pages {
		if _, err := s.store.Page(r.Context(), site, id); err != nil {
			if model.IsNotFound(err) {
				return badRequest("pages names a page the website does not have", model.FieldError{Field: "pages", Message: "[" + strconv.Itoa(i) + "] is not a page of the website"})
			}
			return err
		}
		if !slices.Contains(a.Pages, id) {
			a.Pages = append(a.Pages, id)
		}
	}
	if err := s.store.PutAnnotation(r.Context(), site, a); err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, toAnnotationJSON(a))
}

// listAnnotations answers a website's annotations newest first, in the date range when given.
func (s *Server) listAnnotations(w http.ResponseWriter, r *http.Request, c caller) error {
	win, err := listWindow(r)
	if err != nil {
		return err
	}
	var from, to time.Time
	if r.URL.Query().Has("date") {
		if from, to, err = s.dateRange(r, 0); err != nil {
			return err
		}
		to = to.AddDate(0, 0, 1).Add(-time.Nanosecond)
	}
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	list, more, err := s.store.Annotations(r.Context(), site, from, to, win.after, win.limit)
	if err != nil {
		return err
	}
	out := make([]annotationJSON, len(list))
	for i, a := range list {
		out[i] = toAnnotationJSON(a)
	}
	next := ""
	if more {
		next = cursorAfter(store.AnnotationKey(list[len(list)-1]))
	}
	return writeJSON(w, http.StatusOK, listPage(out, next))
}
