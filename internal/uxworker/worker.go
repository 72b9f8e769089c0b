// Package uxworker consumes the ux queue: for each website it collects the day's
// user-experience dataset records (Chrome UX Report) of every page and device, and the search
// analytics of websites with the Search Console integration, through the google engine. Only
// the ux-worker function and the local service import it, so that no other function links
// Google's client libraries.
package uxworker

import (
	"context"
	"errors"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/google"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/parallel"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/ux"
)

// Opener opens sealed integration credentials.
type Opener interface {
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// Worker collects the user-experience data of websites.
type Worker struct {
	store  *store.Store
	creds  Opener
	google *google.Client
	log    *slog.Logger
	now    func() time.Time
	handle queue.BatchHandler
	// summaries keeps the pages' summaries current.
	summaries *metrics.Reader
	// events records the pages' assessments changing (nil: nothing is recorded).
	events *event.Recorder
	// regressions evaluates the pages' user-experience and real-user series (nil: not
	// evaluated), with rum's reports: once a day, as a website's collection is.
	regressions *regression.Watcher
	rum         *rum.Reader
}

// Deps are what the ux worker of a deployment is built over.
type Deps struct {
	// Google is how the APIs are reached: the CrUX API key, the share of its quota, the
	// endpoints.
	Google      google.Config
	Store       *store.Store
	Credentials Opener
	// Events records the pages' assessments changing; Regressions evaluates the pages'
	// user-experience and real-user series, with RUM's reports, and decides incidents' field
	// verdicts.
	Events      *event.Recorder
	Regressions *regression.Watcher
	RUM         *rum.Reader
	Log         *slog.Logger
}

// New returns the worker NewWorker makes, recording and evaluating what its collections
// change as d says.
func New(ctx context.Context, d Deps) (*Worker, error) {
	w, err := NewWorker(ctx, d.Google, d.Store, d.Credentials, d.Log)
	if err != nil {
		return nil, err
	}
	w.events, w.regressions, w.rum = d.Events, d.Regressions, d.RUM
	return w, nil
}

// SetRegressions makes the worker evaluate the pages' field series and decide incidents' field
// verdicts with r after each collection, as New does (tests and the local service).
func (w *Worker) SetRegressions(r *regression.Watcher) { w.regressions = r }

// NewWorker returns a Worker reaching Google's APIs as cfg says (its clock is the worker's
// too). Without a CrUX key it collects search analytics only, and says so once.
func NewWorker(ctx context.Context, cfg google.Config, st *store.Store, creds Opener, log *slog.Logger) (*Worker, error) {
	client, err := google.New(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	w := &Worker{store: st, creds: creds, google: client, log: log, now: cfg.Now}
	if w.now == nil {
		w.now = time.Now
	}
	w.summaries = metrics.NewReader(st, w.now)
	if !client.HasCrUX() {
		log.WarnContext(ctx, "OPENVITALS_CRUX_API_KEY is not set: the user-experience dataset (CrUX) is not collected; search analytics still are")
	}
	w.handle = queue.Each(log, func(ctx context.Context, d queue.Delivery[ux.Job]) error {
		_, err := w.Collect(ctx, d.Body, max(d.Attempt, 1))
		if err != nil {
			log.ErrorContext(ctx, "user-experience collection failed; SQS will deliver it again", "website", d.Body.Website,
				"day", d.Body.Day, "attempt", d.Attempt, "err", err)
		}
		return err
	})
	return w, nil
}

// HandleSQS is the ux worker's Lambda handler: one website a message. A collection that failed
// for now (the APIs kept answering 429 or 5xx) is reported as a batch item failure, so SQS
// delivers it again after the visibility timeout, up to the queue's maximum receives.
func (w *Worker) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return w.handle(ctx, ev)
}

// NoCrUXKey is the note of a collection made without a CrUX API key.
const NoCrUXKey = "skipped: no CrUX API key (OPENVITALS_CRUX_API_KEY)"

// devices are the devices pages are monitored on, in the order records are collected.
var devices = []string{"mobile", "desktop"}

// Collect collects a website's field data of a day and records how it went (a store.UXRun).
// No data for a URL is a normal outcome; a refused API key or refused Search Console
// credentials are recorded and end that part, since asking again would not help; an API that
// keeps answering 429 or 5xx ends that part and makes Collect return an error, for a retry.
func (w *Worker) Collect(ctx context.Context, job ux.Job, attempt int) (model.UXRun, error) {
	run := model.UXRun{Day: job.Day, Attempt: attempt, Started: w.now().UTC()}
	site, err := w.store.Website(ctx, job.Account, job.Website)
	if model.IsNotFound(err) {
		return run, nil // deleted since it was queued
	}
	if err != nil {
		return run, err
	}
	if len(job.Pages) > 0 {
		return run, w.newPages(ctx, site, job.Pages)
	}
	// The daily fan-out queues a day's collection once; a worker of the fan-out that stopped
	// after sending it leaves the next one to send it again: a day collected is not again.
	if prev, err := w.store.UXRun(ctx, site, job.Day); err == nil && !prev.Finished.IsZero() {
		w.log.InfoContext(ctx, "user-experience collection skipped: the day was collected already", "website", site.ID, "day", job.Day)
		return prev, nil
	} else if err != nil && !model.IsNotFound(err) {
		return run, err
	}
	pages, err := w.store.Pages(ctx, site)
	if err != nil {
		return run, err
	}
	log := w.log.With("website", site.ID, "day", job.Day, "attempt", attempt)
	var notes, failures []string
	var fetched map[string]bool // the histories fetched now, by page and device
	if w.google.HasCrUX() {
		if note, err := w.collectUX(ctx, site, pages, job.Day, &run); err != nil {
			failures = append(failures, "CrUX: "+err.Error())
		} else if note != "" {
			notes = append(notes, "CrUX: "+note)
		}
	} else {
		notes = append(notes, "CrUX: "+NoCrUXKey)
	}
	if w.google.HasCrUX() {
		// Each page's history is asked for again a week after it was last fetched (a new
		// collection period each week), so a day's collection asks for about a seventh of them.
		if fetched, err = w.collectHistory(ctx, site, pages, false); err != nil {
			failures = append(failures, "CrUX history: "+err.Error())
		}
	}
	if note, err := w.collectSearch(ctx, site, pages, job.Day, &run); err != nil {
		failures = append(failures, "Search Console: "+err.Error())
	} else if note != "" {
		notes = append(notes, "Search Console: "+note)
	}
	// The pages lists show each page's summary: make them again with what was stored.
	if err := w.refreshSummaries(context.WithoutCancel(ctx), site, pages); err != nil {
		failures = append(failures, "page summaries: "+err.Error())
	} else if err := w.detect(context.WithoutCancel(ctx), site, fetched); err != nil {
		failures = append(failures, "events: "+err.Error())
	}
	var failed error
	if len(failures) > 0 {
		failed = errors.New(strings.Join(failures, "; "))
		run.Error = failed.Error()
	} else {
		run.Finished = w.now().UTC()
		run.Error = strings.Join(notes, "; ")
	}
	if err := w.store.PutUXRun(context.WithoutCancel(ctx), site, run); err != nil {
		return run, errors.Join(failed, err)
	}
	log.InfoContext(ctx, "user-experience data collected", "pages", len(pages), "uxRecords", run.UXRecords, "uxNoData", run.UXNoData,
		"searchPages", run.SearchPages, "error", run.Error)
	return run, failed
}

// detect records the changes of the pages' user-experience assessments, from their summaries,
// and evaluates the website's user-experience and real-user series for regressions, and the
// weekly series of the histories just fetched (weekly: a series changes once a week).
func (w *Worker) detect(ctx context.Context, site model.Website, weekly map[string]bool) error {
	if w.events == nil {
		return nil
	}
	listings, _, err := w.summaries.Listings(ctx, site, "", 0)
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range listings {
		if passed, ok := metrics.Assess(l.Latest().Get); ok {
			errs = append(errs, w.events.UXAssessment(ctx, site, l.Page, l.Device, passed))
		}
		if w.regressions != nil {
			errs = append(errs, w.regressions.UX(ctx, site, l.Page.ID, l.Device))
			if weekly[l.Page.ID+" "+l.Device] {
				errs = append(errs, w.regressions.UXWeekly(ctx, site, l.Page.ID, l.Device))
			}
		}
	}
	if w.regressions != nil {
		errs = append(errs, w.regressions.RUM(ctx, site, w.rum))
		// The field verdicts of the website's incidents: once a day, as its field data arrive
		// (without real-user reports, from the dataset alone).
		var reports regression.RUMReports
		if w.rum != nil {
			reports = w.rum
		}
		errs = append(errs, w.regressions.Verdicts(ctx, site, reports))
	}
	return errors.Join(errs...)
}

// refreshSummaries makes the summaries of a website's pages again, a few at a time.
func (w *Worker) refreshSummaries(ctx context.Context, site model.Website, pages []model.Page) error {
	return errors.Join(parallel.Do(summaryRefreshers, len(pages), func(i int) error {
		_, err := w.summaries.Refresh(ctx, site, pages[i])
		return err
	})...)
}

// summaryRefreshers bounds the summaries made at once.
const summaryRefreshers = 8

// collectUX stores the day's record of every page and device the dataset has data for. It
// returns a note when the API refused the key (the rest is skipped), and an error when the
// API kept answering 429 or 5xx.
func (w *Worker) collectUX(ctx context.Context, site model.Website, pages []model.Page, day string, run *model.UXRun) (string, error) {
	for _, p := range pages {
		for _, d := range devices {
			vitals, err := w.google.CrUXRecord(ctx, cruxURL(site, p), d)
			switch {
			case errors.Is(err, google.ErrNoData):
				run.UXNoData++
				continue
			case google.Permanent(err):
				return google.Message(err), nil
			case err != nil:
				return "", err
			}
			r := model.UXResult{Page: p.ID, Device: d, Day: day, Vitals: vitals, Collected: w.now().UTC()}
			if err := w.store.PutUXResult(ctx, site, p, r); err != nil {
				return "", err
			}
			run.UXRecords++
		}
	}
	return "", nil
}

// collectSearch stores the search analytics of the website's pages when it has the Search
// Console integration, and records the outcome on the integration. It returns a note when the
// credentials or the property were refused, and an error when the API kept answering 429 or
// 5xx.
func (w *Worker) collectSearch(ctx context.Context, site model.Website, pages []model.Page, day string, run *model.UXRun) (string, error) {
	sc, err := w.store.SearchConsole(ctx, site)
	if model.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	// outcome records how the collection went with these settings: msg says why it failed,
	// or is empty after a success.
	outcome := func(msg string) (string, error) {
		if err := w.store.RecordSearchConsoleRun(ctx, site, sc.Updated, w.now().UTC(), msg); err != nil {
			return "", err
		}
		return msg, nil
	}
	key, err := w.creds.Open(ctx, sc.Credentials, model.IntegrationAAD(site, model.SearchConsoleKind))
	if errors.Is(err, seal.ErrOpen) {
		return outcome("the stored credentials cannot be opened (the credentials key changed?): set the integration again")
	}
	if err != nil {
		return "", err
	}
	from, to, err := searchWindow(day)
	if err != nil {
		return "", err
	}
	client, err := w.google.SearchConsole(ctx, key)
	if err != nil {
		return outcome(err.Error())
	}
	rows, err := client.PageRows(ctx, sc.Property, from, to)
	switch {
	case google.Permanent(err):
		return outcome(google.Message(err))
	case err != nil:
		return "", err
	}
	results := searchResults(site, pages, rows, day, from, to, w.now().UTC())
	if err := w.store.PutSearchResults(ctx, site, pages, results); err != nil {
		return "", err
	}
	for _, r := range results {
		if r.Impressions > 0 {
			run.SearchPages++
		}
	}
	_, err = outcome("")
	return "", err
}

// newPages fetches the history of pages just added, and the origin's when it has none yet.
// A page deleted meanwhile is left out; the key's refusal is logged, not retried.
func (w *Worker) newPages(ctx context.Context, site model.Website, ids []string) error {
	if !w.google.HasCrUX() {
		return nil
	}
	all, err := w.store.Pages(ctx, site)
	if err != nil {
		return err
	}
	var pages []model.Page
	for _, p := range all {
		if slices.Contains(ids, p.ID) {
			pages = append(pages, p)
		}
	}
	if _, err := w.collectHistory(ctx, site, pages, true); err != nil {
		return err
	}
	if w.regressions == nil {
		return nil
	}
	var errs []error
	for _, p := range pages {
		for _, d := range devices {
			errs = append(errs, w.regressions.UXWeekly(ctx, site, p.ID, d))
		}
	}
	return errors.Join(errs...)
}

// collectHistory fetches and stores the dataset's history of pages, and of the website's
// origin, on every device: all of them when force is set, else those last fetched
// model.UXHistoryRefresh ago or never. It returns the pages' histories it stored ("page
// device"). A refused key ends it quietly (the daily collection records why); an API that
// keeps answering 429 or 5xx is an error.
func (w *Worker) collectHistory(ctx context.Context, site model.Website, pages []model.Page, force bool) (map[string]bool, error) {
	fetched := map[string]bool{}
	type target struct {
		page, url string
		origin    bool
	}
	targets := []target{{url: "https://" + site.Domain, origin: true}}
	for _, p := range pages {
		targets = append(targets, target{page: p.ID, url: cruxURL(site, p)})
	}
	now := w.now().UTC()
	for _, t := range targets {
		for _, d := range devices {
			prev, err := w.store.UXHistory(ctx, site, t.page, d)
			switch {
			case err != nil && !model.IsNotFound(err):
				return fetched, err
			case err == nil && (t.origin || !force) && now.Sub(prev.Fetched) < model.UXHistoryRefresh:
				continue
			}
			periods, err := w.google.CrUXHistory(ctx, t.url, t.origin, d)
			h := model.UXHistory{Page: t.page, Device: d, Fetched: now, Periods: periods}
			switch {
			case errors.Is(err, google.ErrNoData):
				h.NoData = true
			case google.Permanent(err):
				w.log.WarnContext(ctx, "CrUX history refused", "website", site.ID, "err", google.Message(err))
				return fetched, nil
			case err != nil:
				return fetched, err
			}
			if err := w.store.PutUXHistory(ctx, site, h); err != nil {
				return fetched, err
			}
			if !t.origin {
				fetched[t.page+" "+d] = true
			}
		}
	}
	return fetched, nil
}

// cruxURL is the URL of a page the dataset knows it by: always https, as public pages are.
func cruxURL(w model.Website, p model.Page) string {
	return "https://" + w.Domain + p.URL
}
