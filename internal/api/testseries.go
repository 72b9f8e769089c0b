package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
)

// The longest description (a deploy version or commit message) and initiator a series takes.
const (
	maxSeriesDescription = 500
	maxSeriesInitiator   = 50
)

// commitHash is a commit's hash as CI names it: abbreviated (7 digits at least) or whole (SHA-1
// or SHA-256).
var commitHash = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// seriesRequest is the body of POST /{w}/testseries. page is the name the PageVitals CLI gives
// pages (run-tests --page ID,device): the same selection, checked alike, one of the two at most.
// Clients of the original service also send website and output for themselves: those are
// accepted and ignored; any other field is refused.
type seriesRequest struct {
	Pages       *[]seriesPage   `json:"pages"`
	Page        *[]seriesPage   `json:"page"`
	Description *string         `json:"description"`
	Initiator   *string         `json:"initiator"`
	Commit      *string         `json:"commit"`
	Website     json.RawMessage `json:"website"`
	Output      json.RawMessage `json:"output"`
}

// seriesPage is a page to test, on one device or (none named) on both.
type seriesPage struct {
	PageID *string `json:"page_id"`
	Device *string `json:"device"`
}

// selection is the pages the request names and the field it named them in.
func (in seriesRequest) selection() ([]seriesPage, string, error) {
	switch {
	case in.Pages != nil && in.Page != nil:
		return nil, "", badRequest("send the pages to test in pages or in page, not both",
			model.FieldError{Field: "pages", Message: "sent with page"}, model.FieldError{Field: "page", Message: "sent with pages"})
	case in.Page != nil:
		return *in.Page, "page", nil
	case in.Pages != nil:
		return *in.Pages, "pages", nil
	}
	return nil, "pages", nil
}

// startTestSeries starts a test series: an audit now of each page and device asked for (every
// page on both devices when none is), counted against the on-demand audits of the day.
func (s *Server) startTestSeries(w http.ResponseWriter, r *http.Request, c caller) error {
	site, in, pages, err := websiteAndAudits[seriesRequest](s, w, r, c)
	if err != nil {
		return err
	}
	req, err := seriesTargets(in, pages)
	if err != nil {
		return err
	}
	var series model.TestSeries
	var tests []model.SeriesTest
	err = s.takeAudits(r.Context(), site, len(req.Targets), func() (n int, err error) {
		series, tests, n, err = s.auditor.Series(r.Context(), site, req)
		return n, err
	})
	if err != nil {
		return err
	}
	budgets, err := s.store.Budgets(r.Context(), site)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, toSeriesJSON(r, site, series, tests, budgets))
}

// seriesTargets checks a series request against the website's pages: every page on both
// devices when it names none, each page and device once.
func seriesTargets(in seriesRequest, pages []model.Page) (audit.SeriesRequest, error) {
	var req audit.SeriesRequest
	selected, field, err := in.selection()
	if err != nil {
		return req, err
	}
	var errs model.FieldErrors
	if in.Description != nil {
		req.Description = strings.TrimSpace(*in.Description)
		if utf8.RuneCountInString(req.Description) > maxSeriesDescription {
			errs.Add("description", "must be at most %d characters", maxSeriesDescription)
		}
	}
	if in.Initiator != nil {
		req.Initiator = strings.TrimSpace(*in.Initiator)
		if utf8.RuneCountInString(req.Initiator) > maxSeriesInitiator {
			errs.Add("initiator", "must be at most %d characters", maxSeriesInitiator)
		}
	}
	if in.Commit != nil {
		req.Commit = strings.ToLower(strings.TrimSpace(*in.Commit))
		if req.Commit != "" && !commitHash.MatchString(req.Commit) {
			errs.Add("commit", "must be a commit hash: 7 to 64 hexadecimal digits")
		}
	}
	byID := make(map[string]model.Page, len(pages))
	for _, p := range pages {
		byID[p.ID] = p
	}
	add := func(p model.Page, device string) {
		if !slices.ContainsFunc(req.Targets, func(t audit.Target) bool { return t.Page.ID == p.ID && t.Device == device }) {
			req.Targets = append(req.Targets, audit.Target{Page: p, Device: device})
		}
	}
	for i, item := range selected {
		devices := metrics.Devices
		if item.Device != nil {
			if !slices.Contains(metrics.Devices, *item.Device) {
				errs.Add(fmt.Sprintf("%s[%d].device", field, i), "must be desktop or mobile")
				continue
			}
			devices = []string{*item.Device}
		}
		if item.PageID == nil {
			errs.Add(fmt.Sprintf("%s[%d].page_id", field, i), "is required")
			continue
		}
		p, ok := byID[*item.PageID]
		if !ok {
			errs.Add(fmt.Sprintf("%s[%d].page_id", field, i), "is not a page of this website")
			continue
		}
		for _, d := range devices {
			add(p, d)
		}
	}
	if len(selected) == 0 {
		for _, p := range pages {
			for _, d := range metrics.Devices {
				add(p, d)
			}
		}
		if len(pages) == 0 {
			errs.Add(field, "the website has no pages to test")
		}
	}
	if len(req.Targets) > maxAuditsPerDemand {
		errs.Add(field, "at most %d tests a series (pages times devices)", maxAuditsPerDemand)
	}
	return req, errs.Err()
}

// takeAudits counts want audits against the account's on-demand audits of the day, then
// queues them; what queue did not queue is given back.
func (s *Server) takeAudits(ctx context.Context, site model.Website, want int, queue func() (int, error)) error {
	if err := s.quota.Take(ctx, site.Account, quota.AuditsPerDay, want); err != nil {
		return err
	}
	n, err := queue()
	if n < want {
		// What was not queued does not count against the day's limit.
		if rerr := s.quota.Return(context.WithoutCancel(ctx), site.Account, quota.AuditsPerDay, want-n); rerr != nil {
			s.log.ErrorContext(ctx, "give back unqueued audits", "err", rerr)
		}
	}
	return err
}

func (s *Server) getTestSeries(w http.ResponseWriter, r *http.Request, c caller) error {
	site, series, err := websiteAnd(s, r, c, withPathID(r, "seriesID", s.store.TestSeries))
	if err != nil {
		return err
	}
	tests, err := s.store.SeriesTests(r.Context(), site, series.ID)
	if err != nil {
		return err
	}
	budgets, err := s.store.Budgets(r.Context(), site)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, toSeriesJSON(r, site, series, tests, budgets))
}

// listTestSeries answers a website's series newest first, without their tests, with cursor
// pagination.
func (s *Server) listTestSeries(w http.ResponseWriter, r *http.Request, c caller) error {
	win, site, err := s.windowAndWebsite(r, c)
	if err != nil {
		return err
	}
	list, more, err := s.store.TestSeriesList(r.Context(), site, win.after, win.limit)
	if err != nil {
		return err
	}
	out := make([]seriesJSON, len(list))
	for i, series := range list {
		out[i] = toSeriesJSON(r, site, series, nil, nil)
	}
	next := ""
	if more {
		next = cursorAfter(list[len(list)-1].ID)
	}
	return writeJSON(w, http.StatusOK, listPage(out, next))
}

// testReport answers a test's Lighthouse report as Lighthouse wrote it; gzipped as stored to
// clients that accept gzip (a report can pass a Lambda response's 6 MB otherwise).
func (s *Server) testReport(w http.ResponseWriter, r *http.Request, c caller) error {
	_, test, err := websiteAnd(s, r, c, withPathID(r, "testID", s.store.SeriesTest))
	if err != nil {
		return err
	}
	if test.ReportKey == "" {
		return newProblem(http.StatusNotFound, fmt.Sprintf("test %s has no report: it is %s", test.ID, test.Status))
	}
	report, err := s.artifacts.Report(r.Context(), test.ReportKey)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	return writeDocument(w, r, report)
}

// seriesJSON is a test series as the API shows it; its tests are in result.list, except in
// the list of series.
type seriesJSON struct {
	ID          string       `json:"id"`
	SeriesID    string       `json:"seriesId"`
	Website     string       `json:"website"`
	Status      string       `json:"status"`
	Description string       `json:"description"`
	Initiator   string       `json:"initiator"`
	Commit      string       `json:"commit,omitempty"`
	CreatedAt   time.Time    `json:"createdAt"`
	Count       int          `json:"count"`
	FailedTests int          `json:"failed_tests"`
	Result      *seriesTests `json:"result,omitempty"`
}

type seriesTests struct {
	List []seriesTestDoc `json:"list"`
}

// toSeriesJSON shows a series, and its tests unless tests is nil (the list of series): each
// with the lab fields of the pages list and the budgets its values exceed and are at risk of.
func toSeriesJSON(r *http.Request, site model.Website, series model.TestSeries, tests []model.SeriesTest, budgets []model.Budget) seriesJSON {
	out := seriesJSON{ID: series.ID, SeriesID: series.ID, Website: site.ID, Status: series.Status(),
		Description: series.Description, Initiator: series.Initiator, Commit: series.Commit, CreatedAt: series.Created.UTC(),
		Count: series.Count, FailedTests: series.Failed}
	if tests == nil {
		return out
	}
	out.Result = &seriesTests{List: make([]seriesTestDoc, len(tests))}
	for i, t := range tests {
		out.Result.List[i] = seriesTestJSON(r, site, t, budgets)
	}
	return out
}

// seriesTestJSON shows one test: what it is first, then its values (null until it completed).
func seriesTestJSON(r *http.Request, site model.Website, t model.SeriesTest, budgets []model.Budget) seriesTestDoc {
	out := seriesTestDoc{ID: t.ID, Page: model.Page{ID: t.Page, URL: t.URL, Alias: t.Alias}, Device: t.Device, Status: t.Status,
		StartedAt: t.Started, FinishedAt: t.Finished}
	if t.Status == model.RunFailed {
		out.Error = &t.Error
	}
	if t.Status == model.RunCompleted {
		vals := metrics.LabValues(model.LabResult{Metrics: t.Metrics})
		vals["opportunities"] = float64(t.Opportunities)
		out.Values = pageMetricsJSON(budgets, t.Device, vals)
		out.Method = model.MethodOr(t.Method, "")
		report := baseURL(r) + "/" + site.ID + "/tests/" + t.ID
		out.Report = &report
	} else {
		out.Values = metricsJSON(pageFields, nil)
		out.Values["budgets_exceeded"], out.Values["budgets_at_risk"], out.Values["opportunities"] = nil, nil, nil
	}
	return out
}

// seriesTestDoc is a series test as the API shows it: its fields, then its values' (those of the pages
// list).
type seriesTestDoc struct {
	ID         string     `json:"id"`
	Page       model.Page `json:"page"`
	Device     string     `json:"device"`
	Status     string     `json:"status"`
	Error      *string    `json:"error,omitempty"`
	StartedAt  *time.Time `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
	Report     *string    `json:"report"`
	// Method is how the test's audit was measured, once it completed.
	Method string         `json:"method,omitempty"`
	Values map[string]any `json:"-"`
}

// MarshalJSON writes the test's fields, then its values in one object.
func (t seriesTestDoc) MarshalJSON() ([]byte, error) {
	type plain seriesTestDoc
	head, err := json.Marshal(plain(t))
	if err != nil {
		return nil, err
	}
	vals, err := json.Marshal(t.Values)
	if err != nil {
		return nil, err
	}
	if len(vals) <= 2 {
		return head, nil
	}
	return append(append(head[:len(head)-1], ','), vals[1:]...), nil
}
