// Package auditworker audits pages: it consumes the audit queue and runs Lighthouse in headless
// Chromium. Only the audit worker function and the local service import it, so the other
// functions do not carry the browser code.
package auditworker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/budget"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/metrics"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/profile"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/redact"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/store"
)

// WorkerConfig is how the audit worker audits.
type WorkerConfig struct {
	// Runs is how many Lighthouse runs make one audit; the median run is kept
	// (OPENVITALS_AUDIT_RUNS, default 3).
	Runs int
	// Scheme is the targets' scheme: "https", or "http" for local use and tests
	// (OPENVITALS_TARGET_SCHEME).
	Scheme string
	// Browser is how sessions are launched: the Chromium binary and the SSRF guard.
	Browser browser.Options
	// RunTimeout bounds one Lighthouse run.
	RunTimeout time.Duration
	// MaxDocumentBytes bounds the document validated (the copy Lighthouse kept of it).
	MaxDocumentBytes int64
	// Events records what an audit changes: budgets' statuses, a page's audit failing or
	// recovering (nil: nothing is recorded).
	Events *event.Recorder
	// Regressions evaluates the page's series after each stored result (nil: not evaluated).
	Regressions *regression.Watcher
	// Secrets opens the sealed secrets of test profiles (nil: a page with a profile fails).
	Secrets profile.Opener
}

// Worker audits pages: Lighthouse runs in fresh Chromium sessions, one load for navigation
// timing, html-validate on the document, then one stored result per page, device and day.
type Worker struct {
	cfg       WorkerConfig
	store     *store.Store
	artifacts *artifact.Store
	runner    *lighthouse.Runner
	log       *slog.Logger
	now       func() time.Time
	handle    queue.BatchHandler
	// summaries keeps the pages' summaries current.
	summaries *metrics.Reader
	budgets   *budget.Checker
	// calibration is this process's benchmarkIndex (0 until its first applied run): the
	// highest of calibrationMeasures measures before that run, raised by any run's own index
	// (see calibrate and observe).
	calibration struct {
		sync.Mutex
		index float64
	}
}

// NewWorker returns a Worker; the Lighthouse runner is started on first use and reused.
func NewWorker(cfg WorkerConfig, st *store.Store, objects *blobstore.Bucket, runner *lighthouse.Runner, log *slog.Logger) *Worker {
	if cfg.Runs < 1 {
		cfg.Runs = 1
	}
	if cfg.Scheme == "" {
		cfg.Scheme = "https"
	}
	if cfg.RunTimeout == 0 {
		cfg.RunTimeout = 3 * time.Minute
	}
	if cfg.MaxDocumentBytes == 0 {
		cfg.MaxDocumentBytes = 10 << 20
	}
	w := &Worker{cfg: cfg, store: st, artifacts: artifact.New(objects), runner: runner,
		log: log, now: func() time.Time { return time.Now().UTC() }}
	w.summaries = metrics.NewReader(st, w.now)
	w.budgets = budget.NewChecker(st, w.summaries)
	w.handle = queue.Each(log, func(ctx context.Context, d queue.Delivery[audit.Job]) error {
		err := w.Audit(ctx, d.Body, d.Attempt)
		if err != nil && ctx.Err() == nil && permanent(err) {
			return nil // recorded as final: another delivery would fail the same way
		}
		return err
	})
	return w
}

// HandleSQS is the audit worker's Lambda handler: one audit a message. A failed audit is
// recorded as the page's last error. A transient failure (Chromium crashing, a timeout) is
// reported as a batch item failure, so that SQS retries it and, after the queue's maximum
// receives, moves it to the dead-letter queue; a permanent one (the guard refuses the target,
// its host does not resolve, the document answers 400 or more) is final at once, and its
// message is deleted.
func (w *Worker) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return w.handle(ctx, ev)
}

// Close stops the Lighthouse runner.
func (w *Worker) Close() error { return w.runner.Close() }

// Audit audits one page on one device and stores the result; a failure is recorded as the
// page's last error and returned. A failure that is permanent, or that of the last attempt, is
// final: it ends the job's series test, and records the day's audit as failed. A page or
// website deleted since the job was queued is skipped without error, and so is a message of a
// series test that was queued again since (its newer message audits it), and a daily audit
// that the daily fan-out queued again (audit.Superseded).
func (w *Worker) Audit(ctx context.Context, job audit.Job, attempt int) error {
	if job.Experiment != "" {
		return w.experimentJob(ctx, job, attempt) // experiment.go
	}
	site, err := w.store.Website(ctx, job.Account, job.Website)
	if model.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	// A daily audit whose fan-out attempt stopped half-way was queued again by the next one:
	// one of the copies runs.
	if why, err := audit.Superseded(ctx, w.store, site, job); err != nil {
		return err
	} else if why != "" {
		w.log.InfoContext(ctx, "daily audit skipped: "+why, "website", site.ID, "page", job.Page, "device", job.Device,
			"day", job.Day, "shard", job.Shard, "attempt", job.Attempt)
		return nil
	}
	page, err := w.store.Page(ctx, site, job.Page)
	if model.IsNotFound(err) {
		// A series' test still ends, so that its series does.
		return w.endTest(ctx, site, model.SeriesTest{ID: job.Test, Series: job.Series, Status: model.RunFailed, Error: "the page was deleted"})
	}
	if err != nil {
		return err
	}
	target := w.cfg.Scheme + "://" + site.Domain + page.URL
	start := time.Now()
	log := w.log.With("website", site.ID, "page", page.ID, "device", job.Device, "url", target, "attempt", attempt)
	var test model.SeriesTest
	reportKey := "" // the page's report of the day
	if job.Test != "" {
		// A test keeps its own report: a later audit the same day replaces the day's.
		reportKey = artifact.SeriesReportKey(site.Account, site.ID, job.Series, job.Test)
		log = log.With("series", job.Series, "test", job.Test)
		var run bool
		if test, run, err = w.startTest(ctx, site, job, log); err != nil || !run {
			return err
		}
	}
	log.InfoContext(ctx, "audit started", "runs", w.cfg.Runs)
	steps := stepsOf(ctx)
	if steps == nil {
		ctx, steps = WithSteps(ctx)
	}

	res, listings, err := w.audit(ctx, site, page, job.Device, target, reportKey)
	if model.IsNotFound(err) {
		// Deleted while it was audited: no result was written, and the purge's last pass
		// removes the report.
		log.InfoContext(ctx, "audit dropped: the website or page was deleted meanwhile", "ms", time.Since(start).Milliseconds())
		return nil
	}
	if err != nil && ctx.Err() != nil {
		// Stopped, not failed: the message is retried and no error is recorded against the page.
		log.InfoContext(ctx, "audit interrupted", "ms", time.Since(start).Milliseconds())
		return err
	}
	if err != nil {
		// No more deliveries follow a permanent failure or the last attempt.
		final := permanent(err) || attempt >= queue.MaxReceives
		log.ErrorContext(ctx, "audit failed", "ms", time.Since(start).Milliseconds(), "final", final, "err", err)
		return w.recordFailure(context.WithoutCancel(ctx), site, page, job, test, attempt, final, err, log)
	}
	if job.Test != "" {
		test.Status, test.Metrics, test.Opportunities, test.ReportKey, test.Finished = model.RunCompleted, res.Metrics, len(res.Opportunities), res.ReportKey, ptr(res.Audited)
		test.Method = res.Method
		if err := w.endTest(context.WithoutCancel(ctx), site, test); err != nil {
			// The day's result is stored; the redelivery audits again and ends the test.
			return err
		}
	}
	w.followUp(context.WithoutCancel(ctx), site, page, job.Device, listings, log)
	log.InfoContext(ctx, "audit finished", "ms", time.Since(start).Milliseconds(), "steps_ms", steps,
		"performance", res.Metrics["performance_score"], "lcp", res.Metrics["lcp"], "opportunities", len(res.Opportunities))
	return nil
}

// startTest marks the series test of job started and says whether to audit it: not when the
// series went with its website, the test ended already, or it was queued again since job.
func (w *Worker) startTest(ctx context.Context, site model.Website, job audit.Job, log *slog.Logger) (model.SeriesTest, bool, error) {
	test, err := w.store.StartSeriesTest(ctx, site, job.Test, job.Queued)
	if model.IsNotFound(err) {
		return test, false, nil // the series went with its website
	}
	if err != nil {
		return test, false, err
	}
	if test.IsFinished() {
		// A redelivered message of a test that ended: auditing again would change the
		// day's result behind the series' back.
		log.InfoContext(ctx, "audit skipped: its test ended already", "status", test.Status)
		return test, false, nil
	}
	if test.Queued != nil && !test.Queued.Equal(job.Queued) {
		log.InfoContext(ctx, "audit skipped: its test was queued again since this message", "queued", job.Queued, "requeued", *test.Queued)
		return test, false, nil
	}
	return test, true, nil
}

// recordFailure records the audit's failure, err, on the page and, when it is final (no
// delivery follows), as an event and as its test's end. It returns err, or an error saying
// that recording it failed too, which must be retried whatever err's kind.
func (w *Worker) recordFailure(ctx context.Context, site model.Website, page model.Page, job audit.Job, test model.SeriesTest,
	attempt int, final bool, err error, log *slog.Logger) error {
	// The page's lastError says what happened without network details; the log has them.
	rec := model.LabError{Message: browser.Reason(err), At: w.now(), Attempts: attempt, Final: final}
	var unrecorded error
	if perr := w.store.PutLabError(ctx, site, page, job.Device, rec); perr != nil && !model.IsNotFound(perr) {
		log.ErrorContext(ctx, "record audit error", "err", perr)
		unrecorded = perr
	}
	if final && w.cfg.Events != nil { // the day's audit failed for good
		if eerr := w.cfg.Events.AuditFailed(ctx, site, page, job.Device, model.Day(w.now()), rec.Message); eerr != nil {
			log.ErrorContext(ctx, "record audit failure event", "err", eerr)
		}
	}
	if final && job.Test != "" { // no more deliveries: the test failed
		test.Status, test.Error, test.Finished = model.RunFailed, rec.Message, ptr(w.now())
		if ferr := w.endTest(ctx, site, test); ferr != nil {
			log.ErrorContext(ctx, "record failed series test", "err", ferr)
			unrecorded = ferr
		}
	}
	if unrecorded != nil {
		return fmt.Errorf("%s; recording it failed: %w", err, unrecorded)
	}
	return err
}

// endTest records a series test's outcome; one that ended before (a redelivered message) is
// left as it was. A job of no series has no test to end.
func (w *Worker) endTest(ctx context.Context, site model.Website, t model.SeriesTest) error {
	if t.ID == "" {
		return nil
	}
	if t.Finished == nil {
		t.Finished = ptr(w.now())
	}
	_, err := w.store.FinishSeriesTest(ctx, site, t)
	if model.IsNotFound(err) {
		return nil // the series went with its website
	}
	return err
}

func ptr[T any](v T) *T { return &v }

// followUp does what a stored result of page on device calls for: the events it causes and
// the evaluation of the page's series; listings are the page's listings with the result. The
// result is stored, and retrying would audit again: a failure is logged, and the next result
// detects the changes (and queues an event whose queuing failed) instead.
func (w *Worker) followUp(ctx context.Context, site model.Website, page model.Page, device string, listings []metrics.Listing, log *slog.Logger) {
	if err := w.detect(ctx, site, page, device, listings); err != nil {
		log.ErrorContext(ctx, "detect events", "err", err)
	}
	if w.cfg.Regressions != nil {
		if err := w.cfg.Regressions.Lab(ctx, site, page, device); err != nil {
			log.ErrorContext(ctx, "evaluate regressions", "err", err) // the next day's result evaluates again
		}
	}
}

// detect records the events a stored result causes: the page's audit recovering, and the
// budgets' statuses changing, the page on device judged on its latest values (from listings).
// A redelivered message finds the states already recorded.
func (w *Worker) detect(ctx context.Context, site model.Website, page model.Page, device string, listings []metrics.Listing) error {
	if w.cfg.Events == nil {
		return nil
	}
	if err := w.cfg.Events.AuditSucceeded(ctx, site, page, device); err != nil {
		return err
	}
	m := event.Measured{Page: page, Device: device, Day: model.Day(w.now())}
	for _, l := range listings {
		if l.Device == device {
			m.Values, m.Known = l.Latest(), true
		}
	}
	return w.cfg.Events.Budgets(ctx, site, m, w.budgets)
}

// audit audits a page on a device and stores the result, its median report at reportKey ("":
// the page's report of the day), with that run's diagnostics beside it. It returns the result
// and the page's listings with it (see storeResult).
func (w *Worker) audit(ctx context.Context, site model.Website, page model.Page, device, target, reportKey string) (model.LabResult, []metrics.Listing, error) {
	// Refuse a forbidden target before starting a browser; the browser's own connections are
	// guarded too (redirects, subresources), by its proxy.
	u, err := url.Parse(target)
	if err != nil {
		return model.LabResult{}, nil, err
	}
	if err := w.cfg.Browser.Guard.CheckHost(ctx, u.Hostname()); err != nil {
		return model.LabResult{}, nil, err
	}
	dir, err := os.MkdirTemp(w.cfg.Browser.TempRoot, "audit-*")
	if err != nil {
		return model.LabResult{}, nil, err
	}
	defer os.RemoveAll(dir)
	prof, method, err := w.profileFor(ctx, site, page, device)
	if err != nil {
		return model.LabResult{}, nil, err
	}

	runs, err := w.lighthouseRuns(ctx, prof, method, target, device, dir, model.ExperimentChanges{})
	if err != nil {
		return model.LabResult{}, nil, err
	}
	median, reports, err := medianRun(runs)
	if err != nil {
		return model.LabResult{}, nil, err
	}
	steps := stepsOf(ctx)
	begin := time.Now()
	dg, harPath := w.diagnose(ctx, median)
	steps.since("diagnose", begin)
	begin = time.Now()
	timing, validation, err := w.document(ctx, median, dg)
	steps.since("validate", begin)
	if err != nil {
		return model.LabResult{}, nil, err
	}

	res := w.labResult(page.ID, device, method, reports, median)
	if prof != nil {
		res.ProfileID, res.ProfileName = prof.ID, prof.Name
	}
	// The document's timings come from the median run's own load of it (its DevTools log), so
	// that they add up; Lighthouse's server-response-time is left aside. Without a DevTools log
	// they are absent, as is the validation without the document's copy.
	if timing != nil {
		res.Metrics["dns_time"] = timing.DNS
		res.Metrics["connect_time"] = timing.Connect
		res.Metrics["server_time"] = timing.Server
		res.Metrics["transfer_time"] = timing.Transfer
	}
	if validation != nil {
		res.Metrics["validation_errors"] = float64(validation.Errors)
	}

	res.ReportKey = reportKey
	if reportKey == "" {
		res.ReportKey = artifact.PageReportKey(site.Account, site.ID, page.ID, res.Day, device)
	}
	begin = time.Now()
	out, err := w.output(ctx, median, dg, harPath, true)
	steps.since("html", begin)
	if err != nil {
		return res, nil, err
	}
	begin = time.Now()
	if err := w.artifacts.Put(ctx, res.ReportKey, out); err != nil {
		return res, nil, err
	}
	steps.since("store_objects", begin)
	begin = time.Now()
	listings, err := w.storeResult(ctx, site, page, res)
	steps.since("store_result", begin)
	return res, listings, err
}

// storeResult stores a page's result of the day and makes the page's summary again with it;
// it returns the page's listings on both devices as the summary now holds them (none when the
// page has no row yet).
func (w *Worker) storeResult(ctx context.Context, site model.Website, page model.Page, res model.LabResult) ([]metrics.Listing, error) {
	// Refused (ErrNotFound) once the website or page is deleted; the report just stored is
	// then removed by the purge's last pass, which waits for the longest a worker can run.
	if err := w.store.PutLabResult(ctx, site, page, res); err != nil {
		return nil, err
	}
	// The pages lists show the page's summary: make it again with this result.
	return w.summaries.Refresh(ctx, site, page)
}

// lighthouseOutcome is one Lighthouse run of an audit: its result, decoded once (report is
// its report), and where the runner wrote it (its side files beside it).
type lighthouseOutcome struct {
	result *lighthouse.Result
	report *lighthouse.Report
	path   string
	// index is the benchmarkIndex its CPU slowdown was calibrated from (0: none, simulated or
	// uncalibrated).
	index float64
	// dials are the connections the run's proxy opened, which its document timing needs.
	dials browser.Dials
}

// lighthouseRuns makes the audit's runs by method, each in a fresh browser with changes
// applied (none but an experiment's), writing into dir.
func (w *Worker) lighthouseRuns(ctx context.Context, prof *auditProfile, method, target, device, dir string, changes model.ExperimentChanges) ([]lighthouseOutcome, error) {
	runs := make([]lighthouseOutcome, 0, w.cfg.Runs)
	for i := range w.cfg.Runs {
		path := filepath.Join(dir, fmt.Sprintf("run-%d.json", i))
		res, dials, index, err := w.lighthouseRun(ctx, prof, method, target, device, path, changes)
		if err != nil {
			return nil, err
		}
		runs = append(runs, lighthouseOutcome{result: res, report: res.Report(), path: path, dials: dials, index: index})
	}
	return runs, nil
}

// medianRun is the run whose report is the median one, with every run's report. Lighthouse's
// median needs each run's FCP and time to interactive; when no run has both (time to
// interactive needs 5 s of quiet in the trace, which a page busy to the end of Lighthouse's
// wait never gives), the run of the median FCP stands in, its TBT absent; with no FCP at all
// there is nothing to report. The other runs' decoded results are let go: only the median
// run's is stored and explained, and a heavy page's result is megabytes.
func medianRun(runs []lighthouseOutcome) (lighthouseOutcome, []*lighthouse.Report, error) {
	reports := make([]*lighthouse.Report, len(runs))
	var withFCP []int
	for i, r := range runs {
		reports[i] = r.report
		if r.report != nil && r.report.FCP != nil && *r.report.FCP > 0 {
			withFCP = append(withFCP, i)
		}
	}
	m := lighthouse.MedianRun(reports)
	if m < 0 {
		if len(withFCP) == 0 {
			return lighthouseOutcome{}, reports, errors.New("no Lighthouse run measured a first contentful paint")
		}
		slices.SortStableFunc(withFCP, func(a, b int) int { return cmp.Compare(*reports[a].FCP, *reports[b].FCP) })
		m = withFCP[(len(withFCP)-1)/2]
	}
	for i := range runs {
		if i != m {
			runs[i].result = nil
		}
	}
	return runs[m], reports, nil
}

// labResult is the day's result of the runs by method, median being the median one: with the
// CPU multiplier that run used and the benchmarkIndex it was calibrated from (applied), or the
// one it measured itself (simulated).
func (w *Worker) labResult(page, device, method string, reports []*lighthouse.Report, median lighthouseOutcome) model.LabResult {
	now := w.now()
	rep := median.report
	res := model.LabResult{
		Page: page, Device: device, Day: model.Day(now), Audited: now, Runs: len(reports),
		LighthouseVersion: rep.LighthouseVersion, Metrics: labMetrics(rep), Samples: runSamples(reports),
		Method: method, BenchmarkIndex: rep.BenchmarkIndex, CPUMultiplier: rep.CPUSlowdown,
	}
	if method == model.MethodApplied && median.index > 0 {
		res.BenchmarkIndex = median.index
	}
	for _, o := range rep.Opportunities {
		res.Opportunities = append(res.Opportunities, o.Opportunity)
	}
	return res
}

// diagnose reads the diagnostics of a run, and writes its HAR beside its report (harPath). A
// run that cannot be explained (Lighthouse recorded no DevTools log) answers nil, said in the
// log: the day's metrics stand without diagnostics.
func (w *Worker) diagnose(ctx context.Context, run lighthouseOutcome) (dg *lighthouse.Diagnosis, harPath string) {
	harPath, phasesPath := run.path+".har", run.path+".phases.json"
	if err := w.runner.Network(ctx, lighthouse.DevtoolsLogPath(run.path), harPath, phasesPath); err != nil {
		w.log.WarnContext(ctx, "no diagnostics: the run's network log could not be read", "err", err)
		return nil, ""
	}
	var in lighthouse.DiagnosisInput
	for _, f := range []struct {
		path string
		to   *[]byte
	}{{phasesPath, &in.Phases}, {lighthouse.ShiftsPath(run.path), &in.Shifts}, {lighthouse.FramesPath(run.path), &in.Frames}} {
		b, err := os.ReadFile(f.path)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			w.log.WarnContext(ctx, "no diagnostics", "err", err)
			return nil, ""
		}
		*f.to = b
	}
	dg, err := run.result.Diagnose(in)
	if err != nil {
		w.log.WarnContext(ctx, "no diagnostics", "err", err)
		return nil, ""
	}
	return dg, harPath
}

// output is what a run stores: its diagnostics dg (nil: none) with their images and the HAR
// at harPath, and, withReport, its report as Lighthouse wrote it and Lighthouse's own HTML
// report of it, for people (the dashboard).
func (w *Worker) output(ctx context.Context, run lighthouseOutcome, dg *lighthouse.Diagnosis, harPath string, withReport bool) (artifact.Output, error) {
	var out artifact.Output
	if withReport {
		out.Report = run.result.JSON()
		htmlPath := strings.TrimSuffix(run.path, ".json") + ".html"
		if err := w.runner.RenderHTML(ctx, run.path, htmlPath); err != nil {
			return out, fmt.Errorf("render the HTML report: %w", err)
		}
		html, err := os.ReadFile(htmlPath)
		if err != nil {
			return out, err
		}
		out.HTML = html
	}
	if dg == nil {
		return out, nil
	}
	har, err := os.ReadFile(harPath)
	if err != nil {
		return out, err
	}
	out.Diagnostics, out.Images, out.HAR = &dg.Diagnostics, dg.Images, har
	return out, nil
}

// document answers the document's timing and validation from the median run's own load: its
// request's phases in the DevTools log (the proxy's share moved back, see
// browser.DocumentTiming) and the copy Lighthouse kept of it. Either is nil when the run lacks
// what it needs. A document that answered 400 or more is a permanent failure.
func (w *Worker) document(ctx context.Context, run lighthouseOutcome, dg *lighthouse.Diagnosis) (*browser.Timing, *lighthouse.Validation, error) {
	var timing *browser.Timing
	if dg != nil {
		for _, r := range dg.Diagnostics.Requests {
			if !r.Document {
				continue
			}
			if r.Status >= 400 {
				return nil, nil, &documentStatusError{URL: r.URL, Status: fmt.Sprintf("%d %s", r.Status, http.StatusText(r.Status))}
			}
			t := browser.DocumentTiming(browser.DocumentPhases{URL: r.URL, Status: r.Status, DNS: orZero(r.DNS),
				Connect: orZero(r.Connect), Wait: orZero(r.Wait), Download: orZero(r.Download)}, run.dials)
			timing = &t
			break
		}
	}
	html, err := os.ReadFile(lighthouse.DocumentPath(run.path))
	if errors.Is(err, os.ErrNotExist) {
		w.log.WarnContext(ctx, "no validation: Lighthouse kept no copy of the document")
		return timing, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if int64(len(html)) > w.cfg.MaxDocumentBytes {
		return nil, nil, errDocumentTooLarge
	}
	v, err := w.runner.ValidateHTML(ctx, html)
	if err != nil {
		return nil, nil, fmt.Errorf("html validation: %w", err)
	}
	return timing, &v, nil
}

func orZero(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// lighthouseRun runs Lighthouse once by method in a fresh browser session, which it closes
// before returning, so that no run inherits another's cache or state. It returns the
// benchmarkIndex the run's CPU slowdown was calibrated from (0 for none).
func (w *Worker) lighthouseRun(ctx context.Context, prof *auditProfile, method, target, device, path string, changes model.ExperimentChanges) (*lighthouse.Result, browser.Dials, float64, error) {
	res, dials, index, err := w.lighthouseRunOnce(ctx, prof, method, target, device, path, changes)
	if err == nil && method == model.MethodApplied {
		w.observe(ctx, res.Report().BenchmarkIndex)
	}
	return res, dials, index, err
}

// lighthouseRunOnce is lighthouseRun without what a run teaches the calibration.
func (w *Worker) lighthouseRunOnce(ctx context.Context, prof *auditProfile, method, target, device, path string, changes model.ExperimentChanges) (*lighthouse.Result, browser.Dials, float64, error) {
	ctx, cancel := context.WithTimeout(ctx, w.cfg.RunTimeout)
	defer cancel()
	steps := stepsOf(ctx)
	begin := time.Now()
	sess, stop, err := w.launch(ctx, prof, target, device, changes)
	steps.since("launch", begin)
	if err != nil {
		return nil, browser.Dials{}, 0, prof.redaction().Error(err)
	}
	var index float64
	if method == model.MethodApplied {
		begin = time.Now()
		index = w.calibrate(ctx, sess.Port())
		steps.since("calibrate", begin)
	}
	runSettings, _ := settings(prof, device, method, index)
	started := time.Now()
	meta, err := w.runner.Audit(ctx, lighthouse.AuditRequest{URL: target, Port: sess.Port(), Device: device, ReportPath: path, Settings: runSettings})
	steps.since("lighthouse", started)
	for part, ms := range meta.Took {
		steps.add("runner_"+part, time.Duration(ms*float64(time.Millisecond)))
	}
	stop()
	begin = time.Now()
	defer func() { steps.since("close_decode", begin) }()
	// The one place a run's artifacts are redacted: its report and its DevTools log, before
	// anything reads them; the HTML report, the HAR and the diagnostics are made from them.
	rule := prof.redaction()
	if err == nil {
		err = redactRun(rule, path)
	}
	err = rule.Error(err)
	refused := sess.RefusedConnections()
	unreached := sess.Unreached(target, started)
	dials := sess.DialsSince(started)
	if cerr := sess.Close(); cerr != nil {
		w.log.WarnContext(ctx, "close browser", "err", cerr)
	}
	if err != nil {
		return nil, dials, 0, fmt.Errorf("lighthouse: %w", err)
	}
	// The one read and decoding of the run's report: its metrics, diagnostics and stored copy
	// all come from it.
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, dials, 0, fmt.Errorf("lighthouse report: %w", err)
	}
	res, err := lighthouse.Decode(raw)
	if err != nil {
		return nil, dials, 0, err
	}
	rep := res.Report()
	if rep.RuntimeError != nil {
		var load *browser.LoadError
		if errors.As(unreached, &load) {
			// Lighthouse saw the proxy's answer for the document (a 502, a failed tunnel); the
			// proxy knows why it could not reach it, which decides whether to retry.
			return nil, dials, 0, &unreachedError{runtime: rep.RuntimeError, load: load}
		}
		if len(refused) > 0 {
			return nil, dials, 0, fmt.Errorf("%w (refused connections: %v)", rep.RuntimeError, refused)
		}
		return nil, dials, 0, rep.RuntimeError
	}
	return res, dials, index, nil
}

// calibrationMeasures is how many times a process measures its machine before its first
// applied run. The benchmark only ever reads low (other work on the machine, a browser still
// starting, slows it; nothing speeds it up), so the highest of a few is the machine's speed:
// one measure read 456 on a machine whose runs read 1,500 to 2,500 (BENCHMARKS.md).
const calibrationMeasures = 3

// calibrate returns this process's benchmarkIndex, measuring it in the browser at port the
// first time (before the run's load, in a tab of its own): the highest of calibrationMeasures
// measures. Measures that all fail are logged and answer 0, the preset's multiplier
// uncalibrated; the next run measures again.
func (w *Worker) calibrate(ctx context.Context, port int) float64 {
	w.calibration.Lock()
	defer w.calibration.Unlock()
	if w.calibration.index > 0 {
		return w.calibration.index
	}
	var best float64
	var errs []error
	for range calibrationMeasures {
		index, err := w.runner.Benchmark(ctx, port)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		best = max(best, index)
	}
	if best <= 0 {
		w.log.WarnContext(ctx, "benchmark failed: the CPU slowdown is the preset's, uncalibrated", "err", errors.Join(errs...))
		return 0
	}
	w.log.InfoContext(ctx, "machine benchmarked for applied throttling", "benchmark_index", best,
		"mobile_cpu_multiplier", model.CalibratedCPU(model.NetworkPresets[model.DevicePresets["mobile"]].CPUSlowdown, best))
	w.calibration.index = best
	return best
}

// observe raises this process's benchmarkIndex to a run's own (Lighthouse measures it before
// each load, unthrottled) when higher, for the runs that follow: as with calibrate's
// measures, a higher reading is nearer the machine's speed.
func (w *Worker) observe(ctx context.Context, index float64) {
	w.calibration.Lock()
	defer w.calibration.Unlock()
	if w.calibration.index > 0 && index > w.calibration.index {
		w.log.InfoContext(ctx, "benchmark index raised by a run's own", "benchmark_index", index, "was", w.calibration.index)
		w.calibration.index = index
	}
}

// redactRun redacts, in place, the files a Lighthouse run wrote for its report at path.
func redactRun(rule *redact.Rule, path string) error {
	for _, f := range []string{path, lighthouse.DevtoolsLogPath(path)} {
		if err := rule.File(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// runSamples keeps every run's value of the metrics regression detection watches: with
// several runs an audit, a day's own spread is measured.
func runSamples(reports []*lighthouse.Report) map[string][]float64 {
	out := map[string][]float64{}
	for _, rep := range reports {
		m := labMetrics(rep)
		if rep.Network != nil {
			m["requests"] = float64(rep.Network.Requests)
		}
		for _, name := range regression.SourceMetrics[regression.SourceLab] {
			if v, ok := m[name]; ok {
				out[name] = append(out[name], v)
			}
		}
	}
	return out
}

// labMetrics names a report's values by their interface fields; values Lighthouse did not
// measure are left out.
func labMetrics(r *lighthouse.Report) map[string]float64 {
	m := map[string]float64{}
	set := func(name string, v *float64) {
		if v != nil {
			m[name] = *v
		}
	}
	set("fcp", r.FCP)
	set("lcp", r.LCP)
	set("cls", r.CLS)
	set("tbt", r.TBT)
	set("speed_index", r.SpeedIndex)
	set("ttfb", r.TTFB)
	set("tti", r.TTI)
	set("performance_score", r.Performance)
	set("accessibility_score", r.Accessibility)
	set("best_practices_score", r.BestPractices)
	set("seo_score", r.SEO)
	set("kb_total", r.KBTotal)
	set("cpu_total", r.CPUTotal)
	set("dom_ready", r.DOMReady)
	set("on_load", r.OnLoad)
	if r.DOMElements != nil {
		m["dom_elements"] = float64(*r.DOMElements)
	}
	if r.DOMMaxDepth != nil {
		m["dom_max_depth"] = float64(*r.DOMMaxDepth)
	}
	if n := r.Network; n != nil {
		for name, v := range map[string]int64{"bytes_total": n.Total, "bytes_doc": n.Document, "bytes_image": n.Image,
			"bytes_js": n.Script, "bytes_css": n.CSS, "bytes_font": n.Font, "bytes_media": n.Media,
			"bytes_other": n.Other, "bytes_thirdparty": n.ThirdParty} {
			m[name] = float64(v)
		}
	}
	return m
}
