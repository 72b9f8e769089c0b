package auditworker

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/compare"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/regression"
)

// ExperimentResult is an experiment's two audits of a page on a device, the plain control and
// the changed load, side by side.
type ExperimentResult struct {
	Control, Experiment compare.Audit
	Comparison          compare.Comparison
	// ProfileID is the test profile both audits used ("": none).
	ProfileID string
	// Method is the measurement method both audits used.
	Method string
	// ControlKey and ExperimentKey are the report keys each audit's diagnostics are stored
	// beside (see artifact.DiagnosticsKey); "" when none were kept.
	ControlKey, ExperimentKey string
}

// Experiment audits a page of the website on a device twice, with the same runs and the same
// test profile: first plainly (the control), right after with changes applied in the browser
// (requests blocked or delayed, a script or stylesheet injected, the document's text
// replaced), and compares them. Nothing is stored: a page's results and reports stay as they
// were. Every connection of both still goes through the SSRF guard, an injected script's too.
func (w *Worker) Experiment(ctx context.Context, site model.Website, page model.Page, device, id string, changes model.ExperimentChanges) (ExperimentResult, error) {
	target := w.cfg.Scheme + "://" + site.Domain + page.URL
	u, err := url.Parse(target)
	if err != nil {
		return ExperimentResult{}, err
	}
	if err := w.cfg.Browser.Guard.CheckHost(ctx, u.Hostname()); err != nil {
		return ExperimentResult{}, err
	}
	prof, method, err := w.profileFor(ctx, site, page, device)
	if err != nil {
		return ExperimentResult{}, err
	}
	dir, err := os.MkdirTemp(w.cfg.Browser.TempRoot, "experiment-*")
	if err != nil {
		return ExperimentResult{}, err
	}
	defer os.RemoveAll(dir)
	// measure makes one of the two audits; its median run's diagnostics are kept at the
	// experiment's own keys (under the website's prefix: they go with it), so that the
	// comparison shows what changed in the load.
	measure := func(name string, c model.ExperimentChanges) (compare.Audit, string, error) {
		runDir := filepath.Join(dir, name)
		if err := os.Mkdir(runDir, 0o700); err != nil {
			return compare.Audit{}, "", err
		}
		runs, err := w.lighthouseRuns(ctx, prof, method, target, device, runDir, c)
		if err != nil {
			return compare.Audit{}, "", fmt.Errorf("%s: %w", name, err)
		}
		median, reports, err := medianRun(runs)
		if err != nil {
			return compare.Audit{}, "", fmt.Errorf("%s: %w", name, err)
		}
		m := labMetrics(median.report)
		if median.report.Network != nil {
			m["requests"] = float64(median.report.Network.Requests)
		}
		a := compare.Audit{Metrics: m, Samples: runSamples(reports)}
		dg, harPath := w.diagnose(ctx, median)
		if dg == nil || id == "" {
			return a, "", nil
		}
		key := artifact.ExperimentReportKey(site.Account, site.ID, id, name)
		out, err := w.output(ctx, median, dg, harPath, false)
		if err == nil {
			err = w.artifacts.Put(ctx, key, out)
		}
		if err != nil {
			return compare.Audit{}, "", fmt.Errorf("%s: store its diagnostics: %w", name, err)
		}
		a.Diagnostics = &dg.Diagnostics
		return a, key, nil
	}
	res := ExperimentResult{Method: method}
	if prof != nil {
		res.ProfileID = prof.ID
	}
	if res.Control, res.ControlKey, err = measure("control", model.ExperimentChanges{}); err != nil {
		return res, err
	}
	if res.Experiment, res.ExperimentKey, err = measure("experiment", changes); err != nil {
		return res, err
	}
	res.Comparison = compare.Of(res.Control, res.Experiment, regression.SourceMetrics[regression.SourceLab])
	return res, nil
}

// experimentJob runs a queued experiment and records its outcome. A failure is retried while
// deliveries remain and it is not permanent; then the experiment failed, saying why.
func (w *Worker) experimentJob(ctx context.Context, job audit.Job, attempt int) error {
	site, err := w.store.Website(ctx, job.Account, job.Website)
	if model.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	e, err := w.store.Experiment(ctx, site, job.Experiment)
	if model.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if e.Status == model.RunCompleted || e.Status == model.RunFailed {
		return nil // a redelivered message of an experiment that ended
	}
	log := w.log.With("website", site.ID, "page", e.Page, "device", e.Device, "experiment", e.ID, "attempt", attempt)
	finish := func(e model.Experiment) error {
		now := w.now()
		e.Finished = &now
		if err := w.store.UpdateExperiment(context.WithoutCancel(ctx), site, e); err != nil && !model.IsNotFound(err) {
			return err
		}
		return nil
	}
	page, err := w.store.Page(ctx, site, e.Page)
	if model.IsNotFound(err) {
		e.Status, e.Error = model.RunFailed, "the page was deleted"
		return finish(e)
	}
	if err != nil {
		return err
	}
	e.Status = model.RunTesting
	if err := w.store.UpdateExperiment(ctx, site, e); model.IsNotFound(err) {
		return nil // deleted since it was read
	} else if err != nil {
		return err
	}
	log.InfoContext(ctx, "experiment started", "runs", w.cfg.Runs)
	res, err := w.Experiment(ctx, site, page, e.Device, e.ID, e.Changes)
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err != nil {
		final := permanent(err) || attempt >= queue.MaxReceives
		log.ErrorContext(ctx, "experiment failed", "final", final, "err", err)
		if !final {
			return err
		}
		e.Status, e.Error = model.RunFailed, browser.Reason(err)
		return finish(e)
	}
	e.Status, e.ProfileID, e.Method = model.RunCompleted, res.ProfileID, res.Method
	e.Control = &model.ExperimentAudit{Metrics: res.Control.Metrics, Samples: res.Control.Samples, ReportKey: res.ControlKey}
	e.Measured = &model.ExperimentAudit{Metrics: res.Experiment.Metrics, Samples: res.Experiment.Samples, ReportKey: res.ExperimentKey}
	log.InfoContext(ctx, "experiment finished", "tbt", res.Control.Metrics["tbt"], "tbt_changed", res.Experiment.Metrics["tbt"])
	return finish(e)
}
