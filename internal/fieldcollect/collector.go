// Package fieldcollect collects field data daily: the user-experience dataset (CrUX API) of
// every page and device, and the search analytics (Search Console API) of websites with the
// integration, through Google's official clients. It consumes the field queue, one website a
// message. Only the field-collector function and the local service import it, so that no
// other function links Google's client libraries.
package fieldcollect

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"google.golang.org/api/chromeuxreport/v1"
	"google.golang.org/api/option"

	"github.com/openvitals/openvitals/internal/fieldqueue"
	"github.com/openvitals/openvitals/internal/seal"
	"github.com/openvitals/openvitals/internal/store"
)

// Config is how the collector reaches Google's APIs.
type Config struct {
	// CrUXKey is the CrUX API key; without one the user-experience part is off.
	CrUXKey string
	// CrUXEndpoint and SearchConsoleEndpoint replace the APIs' base URLs (tests); empty means
	// Google's.
	CrUXEndpoint          string
	SearchConsoleEndpoint string
	// TokenURL is where service-account keys are exchanged for access tokens; empty means
	// Google's (tests set their own).
	TokenURL string
	// HTTPClient carries the Search Console requests and token exchanges; nil means
	// http.DefaultClient. (The CrUX client is built by Google's library around the API key.)
	HTTPClient *http.Client
	// QueriesPerMinute bounds CrUX queries; 0 means 150, the API's quota.
	QueriesPerMinute int
	// MaxAttempts is how often one query is tried while the API answers 429 or 5xx; 0 means 5.
	MaxAttempts int
	// Now and Sleep are the clock the pacing and backoff use; nil means the real one. Tests
	// pass their own to check waits without waiting.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
}

// Opener opens sealed integration credentials.
type Opener interface {
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// Collector collects the field data of websites.
type Collector struct {
	store          *store.Store
	creds          Opener
	log            *slog.Logger
	crux           *chromeuxreport.Service // nil: the user-experience part is off
	pace           *pacer
	searchEndpoint string
	tokenURL       string
	http           *http.Client
	attempts       int
	now            func() time.Time
	sleep          func(context.Context, time.Duration) error
}

// New returns a Collector. Without a CrUX key it collects search analytics only, and says so
// once.
func New(ctx context.Context, cfg Config, st *store.Store, creds Opener, log *slog.Logger) (*Collector, error) {
	c := &Collector{store: st, creds: creds, log: log, searchEndpoint: cfg.SearchConsoleEndpoint,
		tokenURL: cfg.TokenURL, http: cfg.HTTPClient, attempts: cfg.MaxAttempts, now: cfg.Now, sleep: cfg.Sleep}
	if c.tokenURL == "" {
		c.tokenURL = "https://oauth2.googleapis.com/token"
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if c.attempts <= 0 {
		c.attempts = 5
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	qpm := cfg.QueriesPerMinute
	if qpm <= 0 {
		qpm = 150
	}
	c.pace = &pacer{interval: time.Minute / time.Duration(qpm), now: c.now, sleep: c.sleep}
	if cfg.CrUXKey == "" {
		log.WarnContext(ctx, "OPENVITALS_CRUX_API_KEY is not set: the user-experience dataset (CrUX) is not collected; search analytics still are")
		return c, nil
	}
	opts := []option.ClientOption{option.WithAPIKey(cfg.CrUXKey)}
	if cfg.CrUXEndpoint != "" {
		opts = append(opts, option.WithEndpoint(cfg.CrUXEndpoint))
	}
	var err error
	if c.crux, err = chromeuxreport.NewService(ctx, opts...); err != nil {
		return nil, fmt.Errorf("CrUX client: %w", err)
	}
	return c, nil
}

// HandleSQS is the field collector's Lambda handler: one website a message. A collection that
// failed for now (the APIs kept answering 429 or 5xx) is reported as a batch item failure, so
// SQS delivers it again after the visibility timeout, up to three times.
func (c *Collector) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, m := range ev.Records {
		var job fieldqueue.Job
		if err := json.Unmarshal([]byte(m.Body), &job); err != nil || job.Account == "" || job.Website == "" || job.Day == "" {
			// Delivering it again would not make it readable.
			c.log.ErrorContext(ctx, "dropping a field message that is not a collection", "message", m.MessageId, "err", err)
			continue
		}
		attempt, _ := strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
		if _, err := c.Collect(ctx, job, max(attempt, 1)); err != nil {
			c.log.ErrorContext(ctx, "field collection failed; SQS will deliver it again", "website", job.Website, "day", job.Day, "attempt", attempt, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

// devices are the devices pages are monitored on, in the order records are collected.
var devices = []string{"mobile", "desktop"}

// Collect collects a website's field data of a day and records how it went (a store.FieldRun).
// No data for a URL is a normal outcome; a refused API key or refused Search Console
// credentials are recorded and end that part, since asking again would not help; an API that
// keeps answering 429 or 5xx ends that part and makes Collect return an error, for a retry.
func (c *Collector) Collect(ctx context.Context, job fieldqueue.Job, attempt int) (store.FieldRun, error) {
	run := store.FieldRun{Day: job.Day, Attempt: attempt, Started: c.now().UTC()}
	site, err := c.store.Website(ctx, job.Account, job.Website)
	if store.IsNotFound(err) {
		return run, nil // deleted since it was queued
	}
	if err != nil {
		return run, err
	}
	pages, err := c.store.Pages(ctx, site)
	if err != nil {
		return run, err
	}
	log := c.log.With("website", site.ID, "day", job.Day, "attempt", attempt)
	var notes, failures []string
	if c.crux != nil {
		if note, err := c.collectUX(ctx, site, pages, job.Day, &run); err != nil {
			failures = append(failures, "CrUX: "+err.Error())
		} else if note != "" {
			notes = append(notes, "CrUX: "+note)
		}
	}
	if note, err := c.collectSearch(ctx, site, pages, job.Day, &run); err != nil {
		failures = append(failures, "Search Console: "+err.Error())
	} else if note != "" {
		notes = append(notes, "Search Console: "+note)
	}
	var failed error
	if len(failures) > 0 {
		failed = errors.New(strings.Join(failures, "; "))
		run.Error = failed.Error()
	} else {
		run.Finished = c.now().UTC()
		run.Error = strings.Join(notes, "; ")
	}
	if err := c.store.PutFieldRun(context.WithoutCancel(ctx), site, run); err != nil {
		return run, errors.Join(failed, err)
	}
	log.InfoContext(ctx, "field data collected", "pages", len(pages), "uxRecords", run.UXRecords, "uxNoData", run.UXNoData,
		"searchPages", run.SearchPages, "error", run.Error)
	return run, failed
}

// collectUX stores the day's record of every page and device the dataset has data for. It
// returns a note when the API refused the key (the rest is skipped), and an error when the
// API kept answering 429 or 5xx.
func (c *Collector) collectUX(ctx context.Context, site store.Website, pages []store.Page, day string, run *store.FieldRun) (string, error) {
	for _, p := range pages {
		for _, d := range devices {
			vitals, err := c.queryCrUX(ctx, cruxURL(site, p), d)
			switch {
			case errors.Is(err, errNoData):
				run.UXNoData++
				continue
			case permanent(err):
				return message(err), nil
			case err != nil:
				return "", err
			}
			r := store.UXResult{Page: p.ID, Device: d, Day: day, Vitals: vitals, Collected: c.now().UTC()}
			if err := c.store.PutUXResult(ctx, site, r); err != nil {
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
func (c *Collector) collectSearch(ctx context.Context, site store.Website, pages []store.Page, day string, run *store.FieldRun) (string, error) {
	sc, err := c.store.SearchConsole(ctx, site)
	if store.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	// outcome records how the collection went with these settings: msg says why it failed,
	// or is empty after a success.
	outcome := func(msg string) (string, error) {
		if err := c.store.RecordSearchConsoleRun(ctx, site, sc.Updated, c.now().UTC(), msg); err != nil {
			return "", err
		}
		return msg, nil
	}
	key, err := c.creds.Open(ctx, sc.Credentials, store.IntegrationAAD(site, store.SearchConsoleKind))
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
	svc, err := c.searchClient(ctx, key)
	if err != nil {
		return outcome(err.Error())
	}
	rows, err := c.searchRows(ctx, svc, sc.Property, from, to)
	switch {
	case permanent(err):
		return outcome(message(err))
	case err != nil:
		return "", err
	}
	results := searchResults(site, pages, rows, day, from, to, c.now().UTC())
	if err := c.store.PutSearchResults(ctx, site, results); err != nil {
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
