// Package purgeworker consumes the purge queue: it removes the objects and items a deleted
// website, page, multistep test or experiment left behind.
package purgeworker

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// RUMObjects removes a website's real-user objects (its day objects and log entries, in
// their own bucket), all of them or its days before one; *rumstore.Store is one.
type RUMObjects interface {
	DeleteWebsite(ctx context.Context, account, website string) (int, error)
	DeleteDaysBefore(ctx context.Context, account, website, day string) (int, error)
}

// Worker carries out purge jobs.
type Worker struct {
	store   *store.Store
	objects *blobstore.Bucket
	rum     RUMObjects
	purges  *purge.Queue
	// exports is the export bucket and bounds the deployment's retention bounds (WithExports).
	exports *blobstore.Bucket
	bounds  model.RetentionBounds
	// settle is how long after a deletion its purge passes again (OPENVITALS_PURGE_SETTLE_SECONDS).
	settle time.Duration
	now    func() time.Time
	log    *slog.Logger
	handle queue.BatchHandler
}

// NewWorker returns a Worker over the table, the bucket and the real-user objects, queuing a
// purge's further passes to purges until settle has passed since its deletion. Its retention
// passes keep the default bounds (model.Bounds of the stack's defaults) until WithExports.
func NewWorker(st *store.Store, objects *blobstore.Bucket, rum RUMObjects, purges *purge.Queue, settle time.Duration, log *slog.Logger) *Worker {
	w := &Worker{store: st, objects: objects, rum: rum, purges: purges, settle: settle, now: time.Now, log: log,
		bounds: model.DefaultBounds()}
	w.handle = queue.Each(log, func(ctx context.Context, d queue.Delivery[purge.Job]) error {
		err := w.Purge(ctx, model.PurgeJob(d.Body))
		if err != nil {
			log.ErrorContext(ctx, "purge failed", "message", d.ID, "err", err)
		}
		return err
	})
	return w
}

// HandleSQS is the purge worker's Lambda handler: one job a message, failures reported per
// message so that only they are retried.
func (w *Worker) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return w.handle(ctx, ev)
}

// Purge removes the objects and then the items a job covers. Until the job's settle time has
// passed it queues the next pass; the last pass removes the job's marker, so that a purge
// interrupted at any point is found again by purge.Sweep. Running it twice is harmless.
func (w *Worker) Purge(ctx context.Context, job model.PurgeJob) error {
	if err := purge.Job(job).Check(); err != nil {
		return err
	}
	if job.Retention {
		return w.Retain(ctx, job)
	}
	prefix := blobstore.WebsitePrefix(job.Account, job.Website)
	switch {
	case job.Page != "":
		prefix = blobstore.PagePrefix(job.Account, job.Website, job.Page)
	case job.Test != "":
		prefix = blobstore.TestPrefix(job.Account, job.Website, job.Test)
	case job.Experiment != "":
		prefix = artifact.ExperimentPrefix(job.Account, job.Website, job.Experiment)
	}
	objects, err := w.objects.DeletePrefix(ctx, prefix)
	if err != nil {
		return err
	}
	if job.Page == "" && job.Test == "" && job.Experiment == "" {
		n, err := w.rum.DeleteWebsite(ctx, job.Account, job.Website)
		objects += n
		if err != nil {
			return err
		}
		// Its exports, up to tomorrow's (a day exported on demand), while its settings,
		// which name their first day, are still in the table.
		site := model.Website{Account: job.Account, ID: job.Website}
		set, err := w.store.DataSettings(ctx, site)
		if err != nil {
			return err
		}
		n, err = w.deleteExports(ctx, site, set, w.now().UTC().AddDate(0, 0, 2).Format(model.DayLayout))
		objects += n
		if err != nil {
			return err
		}
	}
	if job.Page != "" {
		// A page's experiments keep their objects under the website's prefix: they go
		// before their items, which name them.
		n, err := w.deleteExperimentObjects(ctx, job)
		objects += n
		if err != nil {
			return err
		}
	}
	items, err := w.store.PurgeItems(ctx, job)
	if err != nil {
		return err
	}
	again, err := w.purges.EnqueueNextPass(ctx, job, w.settle, w.now())
	if err != nil {
		return err
	}
	if !again {
		if err := w.store.FinishPurge(ctx, job); err != nil {
			return err
		}
	}
	w.log.InfoContext(ctx, "purged", "account", job.Account, "website", job.Website, "page", job.Page,
		"test", job.Test, "items", items, "objects", objects, "last", !again)
	return nil
}

// deleteExperimentObjects removes the objects of the experiments of the page a job purges.
func (w *Worker) deleteExperimentObjects(ctx context.Context, job model.PurgeJob) (int, error) {
	es, err := w.store.Experiments(ctx, model.Website{Account: job.Account, ID: job.Website})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range es {
		if e.Page != job.Page {
			continue
		}
		m, err := w.objects.DeletePrefix(ctx, artifact.ExperimentPrefix(job.Account, job.Website, e.ID))
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
