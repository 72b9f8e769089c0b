package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/store"
)

const (
	pagesWindowDays    = 30  // days of timeline in the pages list
	defaultRangeDays   = 90  // default range of the timeline and network endpoints
	maxRangeDays       = 731 // longest range one request may ask for
	dateRangeLayout    = "20060102"
	maxAuditsPerDemand = 1000
)

func (s *Server) labRoutes(mux *http.ServeMux) {
	s.route(mux, "GET /{websiteID}/pages", false, s.listPageMetrics)
	s.route(mux, "GET /{websiteID}/pages/{pageID}", false, s.pageDetail)
	s.route(mux, "GET /{websiteID}/pages/{pageID}/timeline", false, s.pageTimeline)
	s.route(mux, "GET /{websiteID}/pages/{pageID}/network", false, s.pageNetwork)
	s.route(mux, "GET /{websiteID}/opportunities", false, s.websiteOpportunities)
	s.route(mux, "GET /{websiteID}/pages/{pageID}/opportunities", false, s.pageOpportunities)
	s.route(mux, "GET /{websiteID}/pages/{pageID}/opportunities/{opportunityID}", false, s.opportunityDetail)
	s.route(mux, "POST /{websiteID}/audits", true, s.queueAudits)
}

// listPageMetrics answers one record per page and device with its last 30 days and the mean of
// its last 3 days present, lab and field data together.
func (s *Server) listPageMetrics(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	budgets, err := s.store.Budgets(r.Context(), site)
	if err != nil {
		return err
	}
	labs, err := s.recentLabs(r.Context(), site)
	if err != nil {
		return err
	}
	search, err := s.hasSearchAnalytics(r.Context(), site)
	if err != nil {
		return err
	}
	if err := s.recentField(r.Context(), site, labs, search); err != nil {
		return err
	}
	out := make([]map[string]any, len(labs))
	for i, l := range labs {
		out[i] = pageWithMetrics(budgets, l, search)
	}
	return writeJSON(w, http.StatusOK, list(out))
}

// pageMetricsJSON renders the metric fields of a page with metrics.
func pageMetricsJSON(budgets []store.Budget, device string, vals map[string]float64) map[string]any {
	m := metricsJSON(pageFields, vals)
	m["budgets_exceeded"], m["budgets_at_risk"] = budgetCounts(budgets, device, vals)
	m["opportunities"] = int64(vals["opportunities"])
	return m
}

// pageAndDevice resolves the website, the page and the required device query parameter.
func (s *Server) pageAndDevice(r *http.Request, c caller) (store.Website, store.Page, string, error) {
	site, err := s.website(r, c)
	if err != nil {
		return site, store.Page{}, "", err
	}
	device := r.URL.Query().Get("device")
	if !slices.Contains(labDevices, device) {
		return site, store.Page{}, "", badRequest("the query parameter device must be desktop or mobile",
			FieldError{Field: "device", Message: "must be desktop or mobile"})
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
	results, err := s.recentResults(r.Context(), site, p.ID, device)
	if err != nil {
		return err
	}
	l := []pageLab{{page: p, device: device, results: results}}
	if err := s.recentField(r.Context(), site, l, false); err != nil {
		return err
	}
	out := map[string]any{"id": p.ID, "url": p.URL, "alias": p.Alias, "device": device, "latestMetrics": nil,
		"latestUx": latestUX(p, device, l[0].ux)}
	if m := mean(results); m != nil {
		// The budget counts judge the latest ux_* values too, as in the pages list.
		vals := l[0].latestValues()
		lm := pageMetricsJSON(budgets, device, vals)
		lm["validation_errors"] = metricsJSON([]string{"validation_errors"}, m)["validation_errors"]
		out["latestMetrics"] = lm
	}
	lastErr, err := s.store.LastLabError(r.Context(), site, p.ID, device)
	switch {
	case err == nil:
		out["lastError"] = map[string]any{"message": lastErr.Message, "at": lastErr.At, "attempts": lastErr.Attempts}
	case !isNotFound(err):
		return err
	}
	return writeJSON(w, http.StatusOK, out)
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
		return badRequest("date "+msg, FieldError{Field: "date", Message: msg})
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
	results, err := s.store.LabResults(r.Context(), site, p.ID, device, store.Day(from), store.Day(to))
	if err != nil {
		return err
	}
	items := make([]map[string]any, len(results))
	for i, res := range results {
		items[i] = metricsJSON(fields, values(res))
		items[i]["date"] = store.DayToISO(res.Day)
		if withCount {
			// The number of Lighthouse runs the day's values come from.
			items[i]["count"] = res.Runs
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

// websiteOpportunities maps every opportunity of the pages' latest results to where it occurs.
func (s *Server) websiteOpportunities(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	labs, err := s.recentLabs(r.Context(), site)
	if err != nil {
		return err
	}
	firstSeen, err := s.store.OpportunitiesFirstSeen(r.Context(), site)
	if err != nil {
		return err
	}
	type pageRef struct {
		ID     string `json:"id"`
		Alias  string `json:"alias"`
		URL    string `json:"url"`
		Device string `json:"device"`
	}
	type opportunity struct {
		Title       string    `json:"title"`
		Category    string    `json:"category"`
		Description string    `json:"description"`
		StartDate   time.Time `json:"startDate"`
		Pages       []pageRef `json:"pages"`
	}
	out := map[string]*opportunity{}
	for _, l := range labs {
		if len(l.results) == 0 {
			continue
		}
		for _, o := range l.results[len(l.results)-1].Opportunities {
			item, ok := out[o.ID]
			if !ok {
				start, _ := time.Parse(store.DayLayout, firstSeen[o.ID])
				item = &opportunity{Title: o.Title, Category: o.Category, Description: o.Description, StartDate: start, Pages: []pageRef{}}
				out[o.ID] = item
			}
			item.Pages = append(item.Pages, pageRef{ID: l.page.ID, Alias: l.page.Alias, URL: l.page.URL, Device: l.device})
		}
	}
	return writeJSON(w, http.StatusOK, map[string]any{"result": map[string]any{"list": out}})
}

// recentLabs reads every page of a website on both devices with its results of the last 30 days.
func (s *Server) recentLabs(ctx context.Context, site store.Website) ([]pageLab, error) {
	pages, err := s.store.Pages(ctx, site)
	if err != nil {
		return nil, err
	}
	today := s.now()
	return s.labResults(ctx, site, pages, labDevices, today.AddDate(0, 0, -(pagesWindowDays-1)), today)
}

// recentResults reads a page's results on a device of the last 30 days, oldest first.
func (s *Server) recentResults(ctx context.Context, site store.Website, page, device string) ([]store.LabResult, error) {
	today := s.now()
	return s.store.LabResults(ctx, site, page, device, store.Day(today.AddDate(0, 0, -(pagesWindowDays-1))), store.Day(today))
}

// latestResult is a page's most recent result on a device in the last 30 days.
func (s *Server) latestResult(r *http.Request, site store.Website, p store.Page, device string) (store.LabResult, bool, error) {
	results, err := s.recentResults(r.Context(), site, p.ID, device)
	if err != nil || len(results) == 0 {
		return store.LabResult{}, false, err
	}
	return results[len(results)-1], true, nil
}

func (s *Server) pageOpportunities(w http.ResponseWriter, r *http.Request, c caller) error {
	site, p, device, err := s.pageAndDevice(r, c)
	if err != nil {
		return err
	}
	latest, ok, err := s.latestResult(r, site, p, device)
	if err != nil {
		return err
	}
	type item struct {
		ID           string `json:"id"`
		Title        string `json:"title"`
		Category     string `json:"category"`
		DisplayValue string `json:"displayValue,omitempty"`
	}
	items := map[string]item{}
	var version any
	if ok {
		version = latest.LighthouseVersion
		for _, o := range latest.Opportunities {
			items[o.ID] = item{ID: o.ID, Title: o.Title, Category: o.Category, DisplayValue: o.DisplayValue}
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
	latest, ok, err := s.latestResult(r, site, p, device)
	if err != nil {
		return err
	}
	if !ok || latest.ReportKey == "" {
		return newProblem(http.StatusNotFound, "no audit of this page on "+device+" yet")
	}
	gz, err := s.reports.Get(r.Context(), latest.ReportKey)
	if err != nil {
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return fmt.Errorf("read report %s: %w", latest.ReportKey, err)
	}
	var report struct {
		Audits map[string]json.RawMessage `json:"audits"`
	}
	if err := json.NewDecoder(io.LimitReader(zr, 64<<20)).Decode(&report); err != nil {
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

// queueAudits queues audits of the website's pages now (all pages and both devices unless the
// body names some), beyond the daily schedule.
func (s *Server) queueAudits(w http.ResponseWriter, r *http.Request, c caller) error {
	site, err := s.website(r, c)
	if err != nil {
		return err
	}
	var in struct {
		Pages   []string `json:"pages"`
		Devices []string `json:"devices"`
	}
	if r.ContentLength != 0 {
		if err := decodeJSON(w, r, &in); err != nil {
			return err
		}
	}
	pages, err := s.store.Pages(r.Context(), site)
	if err != nil {
		return err
	}
	var errs fieldErrors
	for i, d := range in.Devices {
		if !slices.Contains(labDevices, d) {
			errs.add(fmt.Sprintf("devices[%d]", i), "must be desktop or mobile")
		}
	}
	if len(in.Pages) > 0 {
		byID := make(map[string]store.Page, len(pages))
		for _, p := range pages {
			byID[p.ID] = p
		}
		chosen := make([]store.Page, 0, len(in.Pages))
		for i, id := range in.Pages {
			p, ok := byID[id]
			if !ok {
				errs.add(fmt.Sprintf("pages[%d]", i), "is not a page of this website")
				continue
			}
			if !slices.ContainsFunc(chosen, func(q store.Page) bool { return q.ID == id }) {
				chosen = append(chosen, p)
			}
		}
		pages = chosen
	}
	if err := errs.err(); err != nil {
		return err
	}
	devices := slices.Compact(slices.Sorted(slices.Values(in.Devices)))
	perPage := len(devices)
	if perPage == 0 {
		perPage = len(labDevices)
	}
	if n := len(pages) * perPage; n > maxAuditsPerDemand {
		return invalid(FieldError{Field: "pages", Message: fmt.Sprintf("at most %d audits a request", maxAuditsPerDemand)})
	}
	n, err := s.auditor.Website(r.Context(), site, pages, devices)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, map[string]any{"queued": n, "message": fmt.Sprintf("%d audits queued", n)})
}
