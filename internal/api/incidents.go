package api

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/regression"
)

// incidentJSON is an incident as the API shows it: one change of a page or multistep test,
// with the regressions (or improvements) of every metric and device it moved.
type incidentJSON struct {
	ID             string           `json:"id"`
	Kind           string           `json:"kind"`
	State          string           `json:"state"`
	Page           string           `json:"page,omitempty"`
	Test           string           `json:"test,omitempty"`
	Sources        []string         `json:"sources"`
	Metrics        []string         `json:"metrics"`
	Devices        []string         `json:"devices"`
	LastGoodDay    string           `json:"lastGoodDay"`
	FirstBadDay    string           `json:"firstBadDay"`
	ResolvedDay    string           `json:"resolvedDay,omitempty"`
	DetectedAt     time.Time        `json:"detectedAt"`
	AcknowledgedAt *time.Time       `json:"acknowledgedAt,omitempty"`
	Regressions    []regressionJSON `json:"regressions"`
	Cause          causeJSON        `json:"cause"`
	Chart          incidentChart    `json:"chart"`
	Compare        *compareParams   `json:"compare,omitempty"`
	FieldVerdict   *verdictJSON     `json:"fieldVerdict"`
}

// verdictJSON is an incident's field verdict: what real users saw of a lab change (or the lab
// of a field change), and the numbers it rests on.
type verdictJSON struct {
	Verdict   string             `json:"verdict"`
	Summary   string             `json:"summary"`
	DecidedAt time.Time          `json:"decidedAt"`
	Checks    []verdictCheckJSON `json:"checks"`
}

type verdictCheckJSON struct {
	Source     string  `json:"source"`
	Metric     string  `json:"metric"`
	Device     string  `json:"device,omitempty"`
	From       string  `json:"from"`
	To         string  `json:"to"`
	Before     float64 `json:"before"`
	After      float64 `json:"after"`
	Noise      float64 `json:"noise"`
	DaysBefore int     `json:"daysBefore"`
	DaysAfter  int     `json:"daysAfter"`
	Enough     bool    `json:"enough"`
	Moved      bool    `json:"moved"`
}

func toVerdictJSON(v *model.Verdict) *verdictJSON {
	if v == nil {
		return nil
	}
	out := &verdictJSON{Verdict: v.Verdict, Summary: v.Summary, DecidedAt: v.Decided.UTC(), Checks: []verdictCheckJSON{}}
	for _, c := range v.Checks {
		out.Checks = append(out.Checks, verdictCheckJSON{Source: c.Source, Metric: c.Metric, Device: c.Device,
			From: model.DayToISO(c.From), To: model.DayToISO(c.To), Before: c.Before, After: c.After, Noise: c.Noise,
			DaysBefore: c.DaysBefore, DaysAfter: c.DaysAfter, Enough: c.Enough, Moved: c.Moved})
	}
	return out
}

// incidentChart is the data of a small before/after chart: the daily medians of the
// incident's lead regression (its largest lab change, else its largest), and its levels.
type incidentChart struct {
	Regression  string       `json:"regression"`
	Metric      string       `json:"metric"`
	Device      string       `json:"device,omitempty"`
	Unit        string       `json:"unit"`
	LastGoodDay string       `json:"lastGoodDay"`
	FirstBadDay string       `json:"firstBadDay"`
	Before      float64      `json:"before"`
	After       float64      `json:"after"`
	Points      []chartPoint `json:"points"`
}

type chartPoint struct {
	Day   string  `json:"day"`
	Value float64 `json:"value"`
}

// compareParams are the query of the comparison of a lab incident's last good and first bad
// day: GET /{websiteID}/pages/{page}/compare?device=&base=&target=.
type compareParams struct {
	Page   string `json:"page"`
	Device string `json:"device"`
	Base   string `json:"base"`
	Target string `json:"target"`
}

// maxCauseItems bounds an incident's cause list (its regressions keep their own).
const maxCauseItems = 10

func toIncidentJSON(in model.Incident, annotations []model.Annotation) incidentJSON {
	out := incidentJSON{ID: in.ID, Kind: in.Kind, State: in.State(), Sources: []string{}, Metrics: []string{}, Devices: []string{},
		Cause: causeJSON{Changes: []causeItemJSON{}, Annotations: []annotationJSON{}}, FieldVerdict: toVerdictJSON(in.Verdict)}
	first := in.Members[0]
	out.Page, out.Test = first.Page, first.Test
	out.LastGoodDay, out.FirstBadDay = model.DayToISO(first.LastGood), model.DayToISO(first.FirstBad)
	out.DetectedAt = first.Detected.UTC()
	lead := regression.Lead(in)
	var members []regressionJSON
	seenAnnotation := map[string]bool{}
	for _, r := range in.Members {
		j := toRegressionJSON(r, annotations)
		j.Incident = in.ID
		members = append(members, j)
		addOnce(&out.Sources, r.Source)
		addOnce(&out.Metrics, r.Metric)
		if r.Device != "" {
			addOnce(&out.Devices, r.Device)
		}
		if r.Detected.Before(out.DetectedAt) {
			out.DetectedAt = r.Detected.UTC()
		}
		if r.Acknowledged != nil && (out.AcknowledgedAt == nil || r.Acknowledged.Before(*out.AcknowledgedAt)) {
			at := r.Acknowledged.UTC()
			out.AcknowledgedAt = &at
		}
		if r.Recovered > out.ResolvedDay {
			out.ResolvedDay = r.Recovered
		}
		for _, a := range j.Cause.Annotations {
			if !seenAnnotation[a.ID] {
				seenAnnotation[a.ID] = true
				out.Cause.Annotations = append(out.Cause.Annotations, a)
			}
		}
	}
	out.Regressions = members
	if out.State == model.IncidentResolved && in.Kind == model.KindRegression {
		out.ResolvedDay = model.DayToISO(out.ResolvedDay)
	} else {
		out.ResolvedDay = ""
	}
	slices.Sort(out.Devices)
	// The lead's changes first (their impact is in its metric's unit), then the others' not
	// named yet.
	for _, r := range append([]model.Regression{lead}, in.Members...) {
		for _, c := range r.Cause {
			item := causeItemJSON(c)
			if len(out.Cause.Changes) < maxCauseItems && !slices.ContainsFunc(out.Cause.Changes, func(x causeItemJSON) bool {
				return x.Kind == item.Kind && x.URL == item.URL && x.Title == item.Title
			}) {
				out.Cause.Changes = append(out.Cause.Changes, item)
			}
		}
	}
	out.Chart = incidentChart{Regression: lead.ID, Metric: lead.Metric, Device: lead.Device, Unit: regression.Unit(lead.Metric),
		LastGoodDay: model.DayToISO(lead.LastGood), FirstBadDay: model.DayToISO(lead.FirstBad),
		Before: lead.Before.Median, After: lead.After.Median, Points: []chartPoint{}}
	for _, d := range lead.Days {
		out.Chart.Points = append(out.Chart.Points, chartPoint{Day: model.DayToISO(d.Day), Value: d.Value})
	}
	if lead.Source == regression.SourceLab && lead.Page != "" && lead.Device != "" {
		out.Compare = &compareParams{Page: lead.Page, Device: lead.Device, Base: model.DayToISO(lead.LastGood), Target: model.DayToISO(lead.FirstBad)}
	}
	return out
}

func addOnce(list *[]string, v string) {
	if !slices.Contains(*list, v) {
		*list = append(*list, v)
	}
}

var incidentStates = []string{model.IncidentOpen, model.IncidentAcknowledged, model.IncidentResolved}

// incidents reads and groups every regression of a website, with their field verdicts.
func (s *Server) incidents(ctx context.Context, site model.Website) ([]model.Incident, error) {
	regs, _, err := s.store.Regressions(ctx, site, model.RegressionFilter{}, "", 0)
	if err != nil {
		return nil, err
	}
	verdicts, err := s.store.Verdicts(ctx, site)
	if err != nil {
		return nil, err
	}
	all := regression.Incidents(site, regs)
	for i := range all {
		if v, ok := verdicts[all[i].ID]; ok {
			all[i].Verdict = &v
		}
	}
	return all, nil
}

// incidentKey orders incidents newest first bad day first, then by ID.
func incidentKey(in model.Incident) string {
	day, _ := strconv.Atoi(in.FirstBad())
	return strconv.Itoa(99999999-day) + "|" + in.ID
}

// listIncidents answers a website's incidents newest first (by first bad day), filtered by
// state, kind, page, test and date (the first bad day).
func (s *Server) listIncidents(w http.ResponseWriter, r *http.Request, c caller) error {
	win, err := listWindow(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	state, kind, page, test := q.Get("state"), q.Get("kind"), q.Get("page"), q.Get("test")
	var errs model.FieldErrors
	if state != "" && !slices.Contains(incidentStates, state) {
		errs.Add("state", "must be open, acknowledged or resolved")
	}
	if kind != "" && kind != model.KindRegression && kind != model.KindImprovement {
		errs.Add("kind", "must be regression or improvement")
	}
	if len(errs) > 0 {
		return badRequest("a query parameter has a value the list does not know", errs...)
	}
	from, to, err := s.dayFilter(r)
	if err != nil {
		return err
	}
	site, all, err := websiteAnd(s, r, c, s.incidents)
	if err != nil {
		return err
	}
	var kept []model.Incident
	for _, in := range all {
		first := in.Members[0]
		switch {
		case state != "" && in.State() != state, kind != "" && in.Kind != kind,
			page != "" && first.Page != page, test != "" && first.Test != test,
			from != "" && in.FirstBad() < from, to != "" && in.FirstBad() > to:
			continue
		}
		kept = append(kept, in)
	}
	kept, next := cut(kept, incidentKey, win)
	return s.writeIncidents(w, r, site, kept, next)
}

// writeIncidents answers incidents with the annotations of their causes.
func (s *Server) writeIncidents(w http.ResponseWriter, r *http.Request, site model.Website, list []model.Incident, next string) error {
	var regs []model.Regression
	for _, in := range list {
		regs = append(regs, in.Members...)
	}
	annotations, err := s.annotationsFor(r, site, regs)
	if err != nil {
		return err
	}
	out := make([]incidentJSON, len(list))
	for i, in := range list {
		out[i] = toIncidentJSON(in, annotations)
	}
	return writeJSON(w, http.StatusOK, listPage(out, next))
}

func (s *Server) getIncident(w http.ResponseWriter, r *http.Request, c caller) error {
	site, all, err := websiteAnd(s, r, c, s.incidents)
	if err != nil {
		return err
	}
	id := r.PathValue("incidentID")
	i := slices.IndexFunc(all, func(in model.Incident) bool { return in.ID == id })
	if i < 0 {
		return fmt.Errorf("incident %s: %w", quoteShort(id), model.ErrNotFound)
	}
	annotations, err := s.annotationsFor(r, site, all[i].Members)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toIncidentJSON(all[i], annotations))
}

// maxAcknowledge bounds the incidents one request acknowledges.
const maxAcknowledge = 100

// acknowledgeIncidents acknowledges incidents in bulk: {"ids": [...]}. Each open regression
// of each becomes acknowledged (no more reminders); recovered ones stay recovered. An ID the
// website does not have answers 404 and acknowledges nothing.
func (s *Server) acknowledgeIncidents(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, err := websiteAndBody[struct {
		IDs []string `json:"ids"`
	}](s, w, r, c)
	if err != nil {
		return err
	}
	switch {
	case len(in.IDs) == 0:
		return badRequest("name the incidents to acknowledge: {\"ids\": [\"in_...\"]}", model.FieldError{Field: "ids", Message: "is required"})
	case len(in.IDs) > maxAcknowledge:
		return badRequest("at most "+strconv.Itoa(maxAcknowledge)+" incidents a request", model.FieldError{Field: "ids", Message: "must be at most " + strconv.Itoa(maxAcknowledge) + " IDs"})
	}
	all, err := s.incidents(r.Context(), site)
	if err != nil {
		return err
	}
	var chosen []model.Incident
	for _, id := range in.IDs {
		i := slices.IndexFunc(all, func(x model.Incident) bool { return x.ID == id })
		if i < 0 {
			return fmt.Errorf("incident %s: %w", quoteShort(id), model.ErrNotFound)
		}
		if !slices.ContainsFunc(chosen, func(x model.Incident) bool { return x.ID == id }) {
			chosen = append(chosen, all[i])
		}
	}
	now := s.now()
	for k := range chosen {
		for j, reg := range chosen[k].Members {
			if reg.Kind != model.KindRegression || reg.Acknowledged != nil {
				continue
			}
			if chosen[k].Members[j], err = s.store.AcknowledgeRegression(r.Context(), site, reg.ID, now); err != nil {
				return err
			}
		}
	}
	return s.writeIncidents(w, r, site, chosen, "")
}
