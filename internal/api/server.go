// Package api serves openvitals' REST interface over net/http. Every endpoint is declared once,
// in the route table of api.go; one Server builds a handler per endpoint group (each becomes a
// Lambda behind API Gateway) and one with every group (for the local service). Handlers decode
// the request, call the domain (the store, metrics, budget, multistep...) and encode the
// answer; errors become problem responses in one place.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/apikey"
	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/store"
)

// Purger queues the purge of what a deletion left behind.
type Purger interface {
	Enqueue(ctx context.Context, job model.PurgeJob) error
}

// Auditor queues audits of a website's pages on demand, alone or as a test series.
type Auditor interface {
	Website(ctx context.Context, w model.Website, pages []model.Page, devices []string) (int, error)
	Series(ctx context.Context, w model.Website, req audit.SeriesRequest) (model.TestSeries, []model.SeriesTest, int, error)
	// Experiment stores an experiment, queued, and queues its audits.
	Experiment(ctx context.Context, w model.Website, e *model.Experiment) error
}

// FieldHistory queues the fetch of the user-experience dataset's history of pages just added;
// *ux.Queue is one.
type FieldHistory interface {
	NewPages(ctx context.Context, site model.Website, pages []model.Page, now time.Time) error
}

// Runner queues runs of multistep tests.
type Runner interface {
	Run(ctx context.Context, w model.Website, t model.Test) (model.Run, error)
	RunAll(ctx context.Context, w model.Website) (int, error)
}

// Sealer encrypts secrets before they are stored (integration credentials, channel targets
// and signing secrets) and opens them; aad binds them to their owner.
type Sealer interface {
	Seal(ctx context.Context, plaintext, aad []byte) ([]byte, error)
	Open(ctx context.Context, sealed, aad []byte) ([]byte, error)
}

// Deps are what the handlers need.
type Deps struct {
	Store   *store.Store
	Purger  Purger
	Auditor Auditor
	Runner  Runner
	// Reports is the reports' bucket: the audits' artifacts (read through artifact) and the
	// multistep runs' screenshots.
	Reports artifact.Bucket
	// Credentials seals the Search Console credentials and the channels of websites.
	Credentials Sealer
	// Notifications queues channel tests.
	Notifications Notifications
	// FieldHistory queues the history of new pages (nil: the daily collection fetches it).
	FieldHistory FieldHistory
	Log          *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// AllowLocalTargets lets a website's domain be an IP address or carry a port
	// (127.0.0.1:8090), for local use and tests with OPENVITALS_ALLOW_PRIVATE_TARGETS.
	AllowLocalTargets bool
	// Beacons queues real-user page views; Field reads their reports per page and country,
	// Segments those over segments and attributions (nil: rum.SegmentReader over RUM).
	Beacons  Beacons
	Field    FieldReports
	Segments SegmentReports
	// RUM holds the websites' real-user tables (nil: only those Store still holds as items).
	RUM rum.ReportStore
	// TrustViewerCountry takes a beacon's country from CloudFront-Viewer-Country
	// (OPENVITALS_TRUST_VIEWER_COUNTRY: only where CloudFront sets it).
	TrustViewerCountry bool
	// Exports writes Parquet exports on demand (nil: the route answers 503).
	Exports Exporter
	// Retention are the deployment's retention bounds (zero: model.Bounds of the stack's
	// defaults).
	Retention model.RetentionBounds
	// RUMURL is the deployment's RUM entry, which the dashboard names in the snippet it shows
	// (OPENVITALS_RUM_URL; "": the API's own origin).
	RUMURL string
}

// Server holds what the handlers need.
type Server struct {
	store         *store.Store
	purger        Purger
	auditor       Auditor
	runner        Runner
	reports       artifact.Bucket
	artifacts     *artifact.Store
	sealer        Sealer
	log           *slog.Logger
	now           func() time.Time
	local         bool
	beacons       Beacons
	field         FieldReports
	segments      SegmentReports
	notifications Notifications
	fieldHistory  FieldHistory
	sites         *siteCache
	gate          *beaconGate
	metrics       *metrics.Reader
	budgets       *budget.Checker
	quota         *quota.Keeper

	trustViewerCountry bool
	rumURL             string
	exports            Exporter
	retention          model.RetentionBounds
}

// New returns a Server over its dependencies.
func New(d Deps) *Server {
	now := d.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{store: d.Store, purger: d.Purger, auditor: d.Auditor, runner: d.Runner, reports: d.Reports, log: d.Log,
		now: func() time.Time { return now().UTC() }, local: d.AllowLocalTargets, sealer: d.Credentials,
		beacons: d.Beacons, field: d.Field, segments: d.Segments, notifications: d.Notifications, trustViewerCountry: d.TrustViewerCountry,
		fieldHistory: d.FieldHistory,
		rumURL:       d.RUMURL, exports: d.Exports, retention: d.Retention}
	if s.retention == (model.RetentionBounds{}) {
		s.retention = model.DefaultBounds()
	}
	if s.segments == nil && d.Store != nil {
		var tables rum.ReportStore = d.Store
		if d.RUM != nil {
			tables = d.RUM
		}
		s.segments = rum.NewSegmentReader(tables, d.Store)
	}
	s.sites = &siteCache{store: d.Store, now: s.now, entries: map[string]siteEntry{}}
	s.metrics = metrics.NewReader(d.Store, s.now)
	s.budgets = budget.NewChecker(d.Store, s.metrics)
	s.quota = quota.NewKeeper(d.Store, s.now)
	s.artifacts = artifact.New(d.Reports)
	s.gate = &beaconGate{views: s.quota, now: s.now, entries: map[string]gateEntry{}}
	return s
}

// handlerFunc is an endpoint: it writes a success response or returns an error, which becomes
// the problem response in one place (writeError).
type handlerFunc func(w http.ResponseWriter, r *http.Request, c caller) error

// caller is who sent the request: the account and role of its API key (none on public
// routes).
type caller struct {
	account string
	role    model.Role
}

// authenticate finds the caller by the API key of the Authorization header.
func (s *Server) authenticate(r *http.Request) (caller, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > 256 {
		return caller{}, errUnauthorized
	}
	k, err := s.store.APIKeyByHash(r.Context(), apikey.Hash(token))
	if err != nil {
		if isNotFound(err) {
			return caller{}, errUnauthorized
		}
		return caller{}, err
	}
	return caller{account: k.Account, role: k.Role}, nil
}

// website resolves the {websiteID} of the path within the caller's account: a website of
// another account is not found, exactly like one that does not exist.
func (s *Server) website(r *http.Request, c caller) (model.Website, error) {
	return s.store.Website(r.Context(), c.account, r.PathValue("websiteID"))
}

// finish wraps a mux so that unmatched paths and methods answer with problem details too, and
// a panic becomes a logged 500 instead of a dropped connection. Every answer goes through it:
// this is where the headers of all of them are set.
func (s *Server) finish(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every answer declares its type (JSON, problems, the report, the snippet, the
		// dashboard's files): a browser must not guess another.
		w.Header().Set("X-Content-Type-Options", "nosniff")
		defer func() {
			if v := recover(); v != nil {
				s.log.ErrorContext(r.Context(), "panic", "method", r.Method, "path", r.URL.Path, "panic", v)
				writeProblem(w, newProblem(http.StatusInternalServerError, "the request could not be completed; it has been logged"))
			}
		}()
		h, pattern := mux.Handler(r)
		if pattern == "" || !isClean(r.URL.Path) {
			// The mux's own 404 and 405 answers are plain text: keep their status and Allow header.
			rec := &statusRecorder{header: http.Header{}}
			h.ServeHTTP(rec, r)
			if allow := rec.header.Get("Allow"); allow != "" {
				w.Header().Set("Allow", allow)
			}
			// The mux also redirects unclean paths ("//budgets"); an API answers those 404 too.
			status := http.StatusNotFound
			if rec.status == http.StatusMethodNotAllowed {
				status = http.StatusMethodNotAllowed
			}
			detail := "no such endpoint: " + r.Method + " " + r.URL.Path
			if status == http.StatusMethodNotAllowed {
				detail = "method " + r.Method + " is not allowed here"
			}
			writeProblem(w, newProblem(status, detail))
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		mux.ServeHTTP(w, r)
	})
}

// isClean tells whether a path has no empty, "." or ".." segments; the mux would redirect
// such paths to their cleaned form, where an API answers 404.
func isClean(p string) bool {
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	return clean == p
}

// statusRecorder captures the status and headers a handler writes, and drops its body.
type statusRecorder struct {
	header http.Header
	status int
}

func (s *statusRecorder) Header() http.Header         { return s.header }
func (s *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (s *statusRecorder) WriteHeader(code int)        { s.status = code }

// writeJSON answers with v as JSON. It encodes before writing anything, so an encoding error
// can still become a problem response.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
	return nil
}

// list wraps a slice the way the interface returns lists: {"result": {"list": [...]}}.
func list[T any](items []T) any {
	if items == nil {
		items = []T{}
	}
	return map[string]any{"result": map[string]any{"list": items}}
}

func isNotFound(err error) bool { return errors.Is(err, model.ErrNotFound) }
