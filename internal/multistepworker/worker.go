// Package multistepworker plays multistep runs: it consumes the multistep queue and drives each
// journey in headless Chromium. Only the multistep worker function and the local service import
// it, so the other functions do not carry the browser code.
package multistepworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/journey"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/store"
)

// WorkerConfig is how the multistep worker plays journeys.
type WorkerConfig struct {
	// Journey holds the browser options and timeouts; BaseURL and Device are set per run.
	Journey journey.Options
	// Scheme is the targets' scheme: "https", or "http" for local use and tests.
	Scheme string
	// Events records what a run changes: the test's state, a failed run after a completed
	// one (nil: nothing is recorded).
	Events *event.Recorder
	// Regressions evaluates the test's series after each finished run (nil: not evaluated).
	Regressions *regression.Watcher
}

// Worker plays multistep runs from the queue and records their outcome.
type Worker struct {
	cfg     WorkerConfig
	store   *store.Store
	objects *blobstore.Bucket
	log     *slog.Logger
	handle  queue.BatchHandler
}

// NewWorker returns a Worker.
func NewWorker(cfg WorkerConfig, st *store.Store, objects *blobstore.Bucket, log *slog.Logger) *Worker {
	if cfg.Scheme == "" {
		cfg.Scheme = "https"
	}
	w := &Worker{cfg: cfg, store: st, objects: objects, log: log}
	w.handle = queue.Each(log, func(ctx context.Context, d queue.Delivery[multistep.Job]) error {
		err := w.Play(ctx, d.Body, d.Attempt)
		if err != nil {
			log.ErrorContext(ctx, "multistep run failed to play", "message", d.ID, "err", err)
		}
		return err
	})
	return w
}

// HandleSQS is the multistep worker's Lambda handler: one run a message. A run that could not
// be played at all (the browser did not start) is retried by SQS; a journey whose step fails is
// a finished, failed run, not a retry.
func (w *Worker) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return w.handle(ctx, ev)
}

// Play runs one queued run: testing, then completed or failed with the failing step, its error
// and a screenshot stored in S3. A run, test or website deleted since it was queued is skipped.
func (w *Worker) Play(ctx context.Context, job multistep.Job, attempt int) error {
	site, t, run, err := w.find(ctx, job)
	if model.IsNotFound(err) {
		return nil // the run, its test or its website was deleted
	}
	if err != nil {
		return err
	}
	if run.IsFinished() {
		return w.detect(ctx, site, t, run) // a repeated message: its events are recorded once
	}
	log := w.log.With("website", site.ID, "test", t.ID, "run", run.ID, "device", t.Device, "attempt", attempt)
	if run.Queued != nil && !job.Queued.IsZero() && !run.Queued.Equal(job.Queued) {
		// The run was queued again since this message: the newer message plays it.
		log.InfoContext(ctx, "multistep run skipped: it was queued again since this message", "queued", job.Queued, "requeued", *run.Queued)
		return nil
	}
	run.Status = model.RunTesting
	if run.Started == nil {
		run.Started = ptr(time.Now().UTC())
	}
	if err := w.store.UpdateRun(ctx, site, run); errors.Is(err, store.ErrRunEnded) {
		return nil // ended meanwhile (a sweep of overdue runs): nothing left to play
	} else if err != nil {
		return err
	}
	log.InfoContext(ctx, "multistep run started", "steps", len(t.Steps))

	opts := w.cfg.Journey
	opts.BaseURL, opts.Device = w.cfg.Scheme+"://"+site.Domain, t.Device
	res, err := journey.Run(ctx, opts, t.Steps)
	if err != nil {
		return w.notPlayed(context.WithoutCancel(ctx), site, t, run, attempt, err, log)
	}
	w.outcome(ctx, site, t, &run, res, log)
	err = w.store.UpdateRun(context.WithoutCancel(ctx), site, run)
	if model.IsNotFound(err) {
		// Deleted while it ran: the purge's last pass removes the screenshot.
		log.InfoContext(ctx, "multistep run dropped: its test or website was deleted meanwhile")
		return nil
	}
	if errors.Is(err, store.ErrRunEnded) {
		// A sweep of overdue runs ended it while it played: the first outcome stays.
		log.WarnContext(ctx, "multistep run outcome dropped: the run had ended meanwhile", "status", run.Status)
		return nil
	}
	if err != nil {
		return fmt.Errorf("record run: %w", err)
	}
	log.InfoContext(ctx, "multistep run finished", "status", run.Status, "ms", float64(res.Duration.Milliseconds()), "error", run.Error)
	// Like the outcome just recorded: a stop now must not leave the run without its events.
	return w.detect(context.WithoutCancel(ctx), site, t, run)
}

// find reads the website, test and run of job.
func (w *Worker) find(ctx context.Context, job multistep.Job) (site model.Website, t model.Test, run model.Run, err error) {
	if site, err = w.store.Website(ctx, job.Account, job.Website); err != nil {
		return site, t, run, err
	}
	if t, err = w.store.Test(ctx, site, job.Test); err != nil {
		return site, t, run, err
	}
	run, err = w.store.GetRun(ctx, site, job.Test, job.Created, job.Run)
	return site, t, run, err
}

// notPlayed records a run the journey could not play at all (err): queued again for SQS to
// retry, or failed on the last attempt, with its events. It returns err.
func (w *Worker) notPlayed(ctx context.Context, site model.Website, t model.Test, run model.Run, attempt int, err error, log *slog.Logger) error {
	run.Status = model.RunQueued
	if attempt >= queue.MaxReceives {
		run.Status, run.Error, run.Finished = model.RunFailed, browser.Reason(err), time.Now().UTC()
	}
	if uerr := w.store.UpdateRun(ctx, site, run); errors.Is(uerr, store.ErrRunEnded) {
		return nil // a sweep ended it meanwhile
	} else if uerr != nil {
		log.ErrorContext(ctx, "record run", "err", uerr)
	} else if run.IsFinished() {
		if derr := w.detect(ctx, site, t, run); derr != nil {
			log.ErrorContext(ctx, "detect events", "err", derr)
		}
	}
	return err
}

// outcome sets the run's outcome from the journey's result: failed at a step, with a
// screenshot stored in S3, or completed with its measures.
func (w *Worker) outcome(ctx context.Context, site model.Website, t model.Test, run *model.Run, res journey.Result, log *slog.Logger) {
	run.Finished = time.Now().UTC()
	dur := float64(res.Duration.Milliseconds())
	if res.FailedStep >= 0 {
		step := res.FailedStep
		run.Status, run.Error, run.FailedStep = model.RunFailed, res.Error, &step
		if len(res.Screenshot) > 0 {
			key := blobstore.TestPrefix(site.Account, site.ID, t.ID) + "runs/" + run.ID + "/failure.png"
			if err := w.objects.Put(ctx, key, res.Screenshot, "image/png"); err != nil {
				log.ErrorContext(ctx, "store failure screenshot", "err", err)
			} else {
				run.ScreenshotKey = key
			}
		}
	} else {
		bytes := res.BytesTotal
		run.Status = model.RunCompleted
		run.Duration, run.INP, run.TBT, run.CLS, run.CPUTotal, run.BytesTotal = &dur, &res.INP, &res.TBT, &res.CLS, &res.CPUTotal, &bytes
	}
	// Kept for a failed run too: the routes before the failing step were measured.
	run.SoftNavigations = softNavigations(res.SoftNavigations)
}

// detect records the events a finished run causes: the test's state changing, and the run
// failing after a completed one.
func (w *Worker) detect(ctx context.Context, site model.Website, t model.Test, run model.Run) error {
	if w.cfg.Events == nil {
		return nil
	}
	now := time.Now().UTC()
	runs, err := w.store.Runs(ctx, site, t.ID, now.Add(-multistep.StatsWindow), 0)
	if err != nil {
		return err
	}
	if err := w.cfg.Events.Test(ctx, site, t, run, runs, now); err != nil {
		return err
	}
	if w.cfg.Regressions != nil && run.Status == model.RunCompleted {
		return w.cfg.Regressions.Test(ctx, site, t)
	}
	return nil
}

// maxSoftNavigations bounds the routes a run keeps: a run's item stays far below DynamoDB's
// 400 KB (a route takes some 300 bytes at most).
const maxSoftNavigations = 100

// maxURL bounds a route's URL as kept (element names are bounded by the page's script).
const maxURL = 2048

func softNavigations(in []journey.SoftNavigation) []model.SoftNavigation {
	var out []model.SoftNavigation
	for _, sn := range in[:min(len(in), maxSoftNavigations)] {
		if len(sn.URL) > maxURL {
			sn.URL = sn.URL[:maxURL]
		}
		out = append(out, model.SoftNavigation{Step: sn.Step, URL: sn.URL, LCP: sn.LCP, LCPElement: sn.LCPElement,
			CLS: sn.CLS, INP: sn.INP, INPTarget: sn.INPTarget})
	}
	return out
}

func ptr[T any](v T) *T { return &v }
