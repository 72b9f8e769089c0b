package api

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
)

const (
	defaultRangeDays   = 90                // default range of the timeline and network endpoints
	maxRangeDays       = model.HistoryDays // longest range one request may ask for: the history kept
	dateRangeLayout    = "20060102"
	maxAuditsPerDemand = 1000
)

// listPageMetrics answers one record per page and device with its last 30 days and the mean of
// its last 3 days present, lab and field data together.
//
// With limit, a response covers that many pages (each on both devices) and reads only their
// results.
func (s *Server) listPageMetrics(w http.ResponseWriter, r *http.Request, c caller) error {
	win, site, err := s.windowAndWebsite(r, c)
	if err != nil {
		return err
	}
	budgets, err := s.store.Budgets(r.Context(), site)
	if err != nil {
		return err
	}
	search, err := s.metrics.HasSearch(r.Context(), site)
	if err != nil {
		return err
	}
	listings, more, err := s.metrics.Listings(r.Context(), site, win.after, win.limit)
	if err != nil {
		return err
	}
	next := ""
	if more {
		next = cursorAfter(pageKey(listings[len(listings)-1].Page))
	}
	body := appendPageList(listBuffer(), budgets, listings, search, next)
	defer releaseListBuffer(body) // writing copies it
	return writeLarge(w, r, body)
}

// pageAndDevice resolves the website, the page and the required device query parameter.
func (s *Server) pageAndDevice(r *http.Request, c caller) (model.Website, model.Page, string, error) {
	site, err := s.website(r, c)
	if err != nil {
		return site, model.Page{}, "", err
	}
	device := r.URL.Query().Get("device")
	if !slices.Contains(metrics.Devices, device) {
		return site, model.Page{}, "", badRequest("the query parameter device must be desktop or mobile",
			model.FieldError{Field: "device", Message: "must be desktop or mobile"})
	}
	p, err := s.store.Page(r.Context(), site, r.PathValue("pageID"))
	return site, p, device, err
}

func (s *Server) pageDetail(w http.ResponseWriter, r *http.Request, c caller) error {
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return err
	}
	budgets, err := s.store.Budgets(r.Context(), site)
	if err != nil {
		return err
	}
	d, err := s.metrics.Detail(r.Context(), site, p, device)
	if err != nil {
		return err
	}
	out := map[string]any{"id": p.ID, "url": p.URL, "alias": p.Alias, "device": device, "latestMetrics": nil,
		"latestUx": latestUXJSON(p, device, metrics.LatestUX(d.UX))}
	if lab := metrics.LatestLab(d.Lab); lab != nil {
		// The budget counts judge the latest ux_* values too, as in the pages list.
		lm := pageMetricsJSON(budgets, device, d.Latest())
		lm["validation_errors"] = metricsJSON([]string{"validation_errors"}, lab)["validation_errors"]
		out["latestMetrics"] = lm
	}
	if n := len(d.Lab); n > 0 && d.Lab[n-1].ProfileID != "" { // the newest result's profile
		out["profile"] = map[string]string{"id": d.Lab[n-1].ProfileID, "name": d.Lab[n-1].ProfileName}
	}
	if n := len(d.Lab); n > 0 { // how the newest result was measured
		out["measurement"] = measurementJSON(d.Lab[n-1])
	}
	if e := d.LastError; e != nil {
		out["lastError"] = map[string]any{"message": e.Message, "at": e.At, "attempts": e.Attempts}
	}
	return writeJSON(w, http.StatusOK, out)
}

// measurementJSON is how a lab result was measured: its method, the CPU multiplier the runs
// used and the benchmark index (absent when unknown: results stored before methods), and the
// sentence that says so.
func measurementJSON(r model.LabResult) map[string]any {
	out := map[string]any{"method": model.MethodOr(r.Method, ""), "summary": r.MeasuredWith()}
	if r.CPUMultiplier > 0 {
		out["cpuMultiplier"] = r.CPUMultiplier
	}
	if r.BenchmarkIndex > 0 {
		out["benchmarkIndex"] = math.Round(r.BenchmarkIndex)
	}
	return out
}

// dateRange reads the date query parameter, yyyyMMdd-yyyyMMdd, defaulting to the last
// defaultDays days, today included.
func (s *Server) dateRange(r *http.Request, defaultDays int) (time.Time, time.Time, error) {
	today := s.now()
	q := r.URL.Query().Get("date")
	if q == "" {
		return today.AddDate(0, 0, -(defaultDays - 1)), today, nil
	}
	bad := func(msg string) error {
		return badRequest("date "+msg, model.FieldError{Field: "date", Message: msg})
	}
	a, b, ok := strings.Cut(q, "-")
	if !ok {
		return time.Time{}, time.Time{}, bad("must be a range yyyyMMdd-yyyyMMdd")
	}
	from, err1 := time.Parse(dateRangeLayout, a)
	to, err2 := time.Parse(dateRangeLayout, b)
	switch {
	case err1 != nil || err2 != nil || len(a) != 8 || len(b) != 8:
		return time.Time{}, time.Time{}, bad("must be a range yyyyMMdd-yyyyMMdd of real days")
	case to.Before(from):
		return time.Time{}, time.Time{}, bad("ends before it starts")
	case to.Sub(from) > maxRangeDays*24*time.Hour:
		return time.Time{}, time.Time{}, bad(fmt.Sprintf("spans more than %d days", maxRangeDays))
	}
	return from, to, nil
}

// dayItems answers the page's results in the requested range, one item per day with fields.
func (s *Server) dayItems(w http.ResponseWriter, r *http.Request, c caller, fields []string, withCount bool) error {
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return err
	}
	from, to, err := s.dateRange(r, defaultRangeDays)
	if err != nil {
		return err
	}
	results, err := s.store.LabResults(r.Context(), site, p.ID, device, model.Day(from), model.Day(to))
	if err != nil {
		return err
	}
	items := make([]map[string]any, len(results))
	for i, res := range results {
		items[i] = metricsJSON(fields, metrics.LabValues(res))
		items[i]["date"] = model.DayToISO(res.Day)
		if withCount {
			// The number of Lighthouse runs the day's values come from, and how they were
			// measured: a switch of method moves every value.
			items[i]["count"] = res.Runs
			items[i]["method"] = model.MethodOr(res.Method, "")
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"result": items})
}

func (s *Server) pageTimeline(w http.ResponseWriter, r *http.Request, c caller) error {
	return s.dayItems(w, r, c, timelineFields, true)
}

func (s *Server) pageNetwork(w http.ResponseWriter, r *http.Request, c caller) error {
	return s.dayItems(w, r, c, networkFields, false)
}

// opportunitySavings is what an opportunity's items say of its estimated savings and rank.
type opportunitySavings struct {
	Rank          int                `json:"rank"`
	Impact        float64            `json:"impact"`
	SavingsMs     float64            `json:"savingsMs"`
	SavingsBytes  float64            `json:"savingsBytes"`
	MetricSavings map[string]float64 `json:"metricSavings,omitempty"`
	CategoryTitle string             `json:"categoryTitle"`
}

// websiteOpportunities maps every opportunity of the pages' latest results to where it occurs,
// ranked by its impact over the website.
func (s *Server) websiteOpportunities(w http.ResponseWriter, r *http.Request, c caller) error {
	_, opps, err := websiteAnd(s, r, c, s.metrics.Opportunities)
	if err != nil {
		return err
	}
	type pageRef struct {
		ID           string  `json:"id"`
		Alias        string  `json:"alias"`
		URL          string  `json:"url"`
		Device       string  `json:"device"`
		Impact       float64 `json:"impact"`
		SavingsMs    float64 `json:"savingsMs"`
		SavingsBytes float64 `json:"savingsBytes"`
	}
	type opportunity struct {
		Title       string    `json:"title"`
		Category    string    `json:"category"`
		Description string    `json:"description"`
		StartDate   time.Time `json:"startDate"`
		Pages       []pageRef `json:"pages"`
		opportunitySavings
	}
	out := make(map[string]opportunity, len(opps))
	for i, o := range opps {
		item := opportunity{Title: o.Title, Category: o.Category, Description: o.Description, StartDate: o.FirstSeen,
			Pages: make([]pageRef, len(o.Pages)),
			opportunitySavings: opportunitySavings{Rank: i + 1, Impact: o.Impact, SavingsMs: o.SavingsMs, SavingsBytes: o.SavingsBytes,
				MetricSavings: o.MetricSavings, CategoryTitle: lighthouse.CategoryTitle(o.Category)}}
		for j, pd := range o.Pages {
			item.Pages[j] = pageRef{ID: pd.Page.ID, Alias: pd.Page.Alias, URL: pd.Page.URL, Device: pd.Device,
				Impact: pd.Impact, SavingsMs: pd.SavingsMs, SavingsBytes: pd.SavingsBytes}
		}
		out[o.ID] = item
	}
	return writeJSON(w, http.StatusOK, map[string]any{"result": map[string]any{"list": out}})
}

// pageOpportunities lists the opportunities of a page's latest result on a device, ranked by
// impact.
func (s *Server) pageOpportunities(w http.ResponseWriter, r *http.Request, c caller) error {
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return err
	}
	latest, ok, err := s.metrics.LatestResult(r.Context(), site, p.ID, device)
	if err != nil {
		return err
	}
	type item struct {
		ID           string `json:"id"`
		Title        string `json:"title"`
		Category     string `json:"category"`
		DisplayValue string `json:"displayValue,omitempty"`
		opportunitySavings
	}
	items := map[string]item{}
	var version any
	if ok {
		version = latest.LighthouseVersion
		metrics.Rank(latest.Opportunities)
		for i, o := range latest.Opportunities {
			items[o.ID] = item{ID: o.ID, Title: o.Title, Category: o.Category, DisplayValue: o.DisplayValue,
				opportunitySavings: opportunitySavings{Rank: i + 1, Impact: metrics.Impact(o), SavingsMs: o.SavingsMs,
					SavingsBytes: o.SavingsBytes, MetricSavings: o.MetricSavings, CategoryTitle: lighthouse.CategoryTitle(o.Category)}}
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"result": map[string]any{"lighthouseVersion": version, "list": items}})
}

// opportunityDetail answers the audit's object from the stored report, as Lighthouse wrote it.
func (s *Server) opportunityDetail(w http.ResponseWriter, r *http.Request, c caller) error {
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return err
	}
	id := r.PathValue("opportunityID")
	latest, ok, err := s.metrics.LatestResult(r.Context(), site, p.ID, device)
	if err != nil {
		return err
	}
	if !ok || latest.ReportKey == "" {
		return newProblem(http.StatusNotFound, "no audit of this page on "+device+" yet")
	}
	doc, err := s.artifacts.Report(r.Context(), latest.ReportKey)
	if err != nil {
		return err
	}
	raw, err := doc.Plain()
	if err != nil {
		return err
	}
	var report struct {
		Audits map[string]json.RawMessage `json:"audits"`
	}
	if err := json.Unmarshal(raw, &report); err != nil {
		return fmt.Errorf("decode report %s: %w", latest.ReportKey, err)
	}
	audit, ok := report.Audits[id]
	if !ok {
		return newProblem(http.StatusNotFound, fmt.Sprintf("opportunity %s not found in the latest report", id))
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(audit)
	return nil
}

// websiteAndAudits reads what a request for audits on demand starts from: the website, the
// body into an In when there is one (none asks for every page on both devices), and the
// website's pages.
func websiteAndAudits[In any](s *Server, w http.ResponseWriter, r *http.Request, c caller) (model.Website, In, []model.Page, error) {
	var in In
	site, err := s.website(r, c)
	if err != nil {
		return site, in, nil, err
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &in); err != nil {
			return site, in, nil, err
		}
	}
	pages, err := s.store.Pages(r.Context(), site)
	return site, in, pages, err
}

// queueAudits queues audits of the website's pages now (all pages and both devices unless the
// body names some), beyond the daily schedule.
func (s *Server) queueAudits(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, pages, err := websiteAndAudits[struct {
		Pages   []string `json:"pages"`
		Devices []string `json:"devices"`
	}](s, w, r, c)
	if err != nil {
		return err
	}
	var errs model.FieldErrors
	for i, d := range in.Devices {
		if !slices.Contains(metrics.Devices, d) {
			errs.Add(fmt.Sprintf("devices[%d]", i), "must be desktop or mobile")
		}
	}
	if len(in.Pages) > 0 {
		byID := make(map[string]model.Page, len(pages))
		for _, p := range pages {
			byID[p.ID] = p
		}
		chosen := make([]model.Page, 0, len(in.Pages))
		for i, id := range in.Pages {
			p, ok := byID[id]
			if !ok {
				errs.Add(fmt.Sprintf("pages[%d]", i), "is not a page of this website")
				continue
			}
			if !slices.ContainsFunc(chosen, func(q model.Page) bool { return q.ID == id }) {
				chosen = append(chosen, p)
			}
		}
		pages = chosen
	}
	if err := errs.Err(); err != nil {
		return err
	}
	devices := slices.Compact(slices.Sorted(slices.Values(in.Devices)))
	perPage := len(devices)
	if perPage == 0 {
		perPage = len(metrics.Devices)
	}
	if n := len(pages) * perPage; n > maxAuditsPerDemand {
		return invalid(model.FieldError{Field: "pages", Message: fmt.Sprintf("at most %d audits a request", maxAuditsPerDemand)})
	}
	want := len(pages) * perPage
	var n int
	err = s.takeAudits(r.Context(), site, want, func() (int, error) {
		var err error
		n, err = s.auditor.Website(r.Context(), site, pages, devices)
		return n, err
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, map[string]any{"queued": n, "message": fmt.Sprintf("%d audits queued", n)})
}
