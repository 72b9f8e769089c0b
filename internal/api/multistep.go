package api

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/model/step"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
)

// testStatsJSON is a test in the list, with its statistics over the latest 14 days. Averages
// are null while there is no run to average.
type testStatsJSON struct {
	model.Test
	INP          *int              `json:"inp"`
	TBT          *int              `json:"tbt"`
	CLS          *float64          `json:"cls"`
	Duration     *int              `json:"duration"`
	SuccessRates []successRateJSON `json:"success_rates"`
	State        string            `json:"state"`
	SuccessRate  *int              `json:"success_rate"`
}

type successRateJSON struct {
	Date string `json:"date"`
	Rate int    `json:"rate"`
}

func (s *Server) listTests(w http.ResponseWriter, r *http.Request, c caller) error {
	withStats := func(ctx context.Context, site model.Website) ([]multistep.TestStats, error) {
		return multistep.TestsWithStats(ctx, s.store, site, s.now())
	}
	return websiteList(s, w, r, c, withStats, testKey, toTestStatsJSON)
}

func toTestStatsJSON(t multistep.TestStats) testStatsJSON {
	out := testStatsJSON{Test: t.Test, SuccessRates: make([]successRateJSON, len(t.SuccessRates)),
		State: t.State, SuccessRate: t.SuccessRate,
		INP: roundedInt(t.INP), TBT: roundedInt(t.TBT), CLS: roundedCLS(t.CLS), Duration: roundedInt(t.Duration)}
	for j, d := range t.SuccessRates {
		out.SuccessRates[j] = successRateJSON{Date: d.Date, Rate: d.Rate}
	}
	return out
}

// testKind is how multistep tests are created, changed and deleted; a deleted test's runs are
// purged.
func (s *Server) testKind() itemKind[model.Test, model.TestPatch] {
	return itemKind[model.Test, model.TestPatch]{
		pathID:  "testID",
		newItem: func() model.Test { return model.Test{Steps: []step.Step{}} },
		apply:   applyFields(model.TestPatch.Apply),
		get:     s.store.Test,
		create:  s.store.CreateTest,
		update:  byValue(s.store.UpdateTest),
		remove:  s.purging(s.store.DeleteTest),
		show:    showing(itself[model.Test]),
	}
}

// test resolves the website and the {testID} of the path within the caller's account.
func (s *Server) test(r *http.Request, c caller) (model.Website, model.Test, error) {
	return websiteAnd(s, r, c, withPathID(r, "testID", s.store.Test))
}

// roundedCLS is a CLS value as the interface shows it (four decimals), or nil.
func roundedCLS(v *float64) *float64 {
	if v == nil {
		return nil
	}
	cls := metrics.Round("cls", *v)
	return &cls
}

func roundedInt(v *float64) *int {
	if v == nil {
		return nil
	}
	n := int(math.Round(*v))
	return &n
}

// runJSON is a multistep run as the interface shows it; measurements are null until it completed.
type runJSON struct {
	ID         string    `json:"id"`
	Created    time.Time `json:"created"`
	Device     string    `json:"device"`
	Duration   *int      `json:"duration"`
	INP        *int      `json:"inp"`
	TBT        *int      `json:"tbt"`
	CLS        *float64  `json:"cls"`
	CPUTotal   *int      `json:"cpu_total"`
	BytesTotal *int64    `json:"bytes_total"`
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	FailedStep *int      `json:"failedStep,omitempty"`
	Screenshot bool      `json:"screenshot,omitempty"`
	// SoftNavigations are the route changes of a single-page app the steps made, with each
	// route's vitals and where its real-user data is.
	SoftNavigations []softNavigationJSON `json:"softNavigations,omitempty"`
}

// softNavigationJSON is a route a step changed to, as the lab measured it.
type softNavigationJSON struct {
	Step       int        `json:"step"`
	URL        string     `json:"url"`
	LCP        *int       `json:"lcp"`
	LCPElement string     `json:"lcpElement,omitempty"`
	CLS        float64    `json:"cls"`
	INP        *int       `json:"inp"`
	INPTarget  string     `json:"inpTarget,omitempty"`
	Field      *fieldLink `json:"field"`
}

// fieldLink says where the real users of a route are counted: the pages report's row, the
// monitored pages (the reports' page filter) and the page group. Null for an address off
// the website's domain.
type fieldLink struct {
	Path  string   `json:"path"`
	Pages []string `json:"pages"`
	Group string   `json:"group,omitempty"`
}

// toRunJSON writes a run; site matches its routes to their real-user data (nil: no run of
// the list has routes).
func toRunJSON(r model.Run, site *rum.Site) runJSON {
	out := runJSON{ID: r.ID, Created: r.Created, Device: r.Device, Status: r.Status,
		Duration: roundedInt(r.Duration), INP: roundedInt(r.INP), TBT: roundedInt(r.TBT), CPUTotal: roundedInt(r.CPUTotal),
		CLS: roundedCLS(r.CLS), BytesTotal: r.BytesTotal, Error: r.Error, FailedStep: r.FailedStep, Screenshot: r.ScreenshotKey != ""}
	for _, sn := range r.SoftNavigations {
		j := softNavigationJSON{Step: sn.Step, URL: sn.URL, LCP: roundedInt(sn.LCP), LCPElement: sn.LCPElement,
			CLS: *roundedCLS(&sn.CLS), INP: roundedInt(sn.INP), INPTarget: sn.INPTarget}
		if site != nil {
			if route, err := site.Route(sn.URL); err == nil {
				j.Field = &fieldLink{Path: route.Key, Pages: route.Pages, Group: route.Group}
				if j.Field.Pages == nil {
					j.Field.Pages = []string{}
				}
			}
		}
		out.SoftNavigations = append(out.SoftNavigations, j)
	}
	return out
}

// fieldSite reads what matching routes to their real-user data takes: the website's page
// groups and monitored pages.
func (s *Server) fieldSite(ctx context.Context, site model.Website) (*rum.Site, error) {
	set, err := s.store.RUMSettings(ctx, site.Account, site.ID)
	if err != nil {
		return nil, err
	}
	pages, err := s.store.Pages(ctx, site)
	if err != nil {
		return nil, err
	}
	return rum.NewSite(site, set, pages), nil
}

// maxRunsListed bounds the runs list: the newest hundred.
const maxRunsListed = 100

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, c caller) error {
	site, t, err := s.test(r, c)
	if err != nil {
		return err
	}
	runs, err := s.store.Runs(r.Context(), site, t.ID, time.Time{}, maxRunsListed)
	if err != nil {
		return err
	}
	// Read only when a run has routes to link.
	var field *rum.Site
	if slices.ContainsFunc(runs, func(r model.Run) bool { return len(r.SoftNavigations) > 0 }) {
		if field, err = s.fieldSite(r.Context(), site); err != nil {
			return err
		}
	}
	out := make([]runJSON, len(runs))
	for i, run := range runs {
		out[i] = toRunJSON(run, field)
	}
	return writeJSON(w, http.StatusOK, list(out))
}

// runScreenshot answers the PNG of the page at a failed run's failing step (events link to it).
func (s *Server) runScreenshot(w http.ResponseWriter, r *http.Request, c caller) error {
	site, t, err := s.test(r, c)
	if err != nil {
		return err
	}
	runs, err := s.store.Runs(r.Context(), site, t.ID, time.Time{}, 0)
	if err != nil {
		return err
	}
	id := r.PathValue("runID")
	i := slices.IndexFunc(runs, func(run model.Run) bool { return run.ID == id })
	switch {
	case i < 0:
		return newProblem(http.StatusNotFound, "run "+id+" not found")
	case runs[i].ScreenshotKey == "":
		return newProblem(http.StatusNotFound, "run "+id+" has no screenshot: only a failed step takes one")
	}
	png, err := s.reports.Get(r.Context(), runs[i].ScreenshotKey)
	if errors.Is(err, blobstore.ErrNotFound) {
		return newProblem(http.StatusNotFound, "the screenshot of run "+id+" has expired")
	}
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=86400")
	_, _ = w.Write(png)
	return nil
}

func (s *Server) startRun(w http.ResponseWriter, r *http.Request, c caller) error {
	site, t, err := s.test(r, c)
	if err != nil {
		return err
	}
	if err := s.quota.Take(r.Context(), site.Account, quota.RunsPerDay, 1); err != nil {
		return err
	}
	run, err := s.runner.Run(r.Context(), site, t)
	if err != nil {
		if rerr := s.quota.Return(context.WithoutCancel(r.Context()), site.Account, quota.RunsPerDay, 1); rerr != nil {
			s.log.ErrorContext(r.Context(), "give back an unqueued run", "err", rerr)
		}
		return err
	}
	return writeJSON(w, http.StatusCreated, map[string]string{"runId": run.ID})
}

func (s *Server) runAll(w http.ResponseWriter, r *http.Request, c caller) error {
	site, tests, err := websiteAnd(s, r, c, s.store.Tests)
	if err != nil {
		return err
	}
	if err := s.quota.Take(r.Context(), site.Account, quota.RunsPerDay, len(tests)); err != nil {
		return err
	}
	n, err := s.runner.RunAll(r.Context(), site)
	if n < len(tests) {
		if rerr := s.quota.Return(context.WithoutCancel(r.Context()), site.Account, quota.RunsPerDay, len(tests)-n); rerr != nil {
			s.log.ErrorContext(r.Context(), "give back unqueued runs", "err", rerr)
		}
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"message": fmt.Sprintf("%d runs queued", n), "queued": n})
}
