// Package purgeworker consumes the purge queue: it removes the objects and items a deleted
// website, page or multistep test left behind.
package purgeworker

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/store"
)

// Worker carries out purge jobs.
type Worker struct {
	store   *store.Store
	objects *blobstore.Bucket
	log     *slog.Logger
	handle  queue.BatchHandler
}

// New builds the purge worker from the service.
func New(_ context.Context, svc *service.Service) (*Worker, error) {
	return NewWorker(svc.Store, svc.Objects, svc.Log), nil
}

// NewWorker returns a Worker over the table and bucket.
func NewWorker(st *store.Store, objects *blobstore.Bucket, log *slog.Logger) *Worker {
	w := &Worker{store: st, objects: objects, log: log}
	w.handle = queue.Each(log, func(ctx context.Context, d queue.Delivery[purge.Job]) error {
		err := w.Purge(ctx, store.PurgeJob(d.Body))
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

// Purge removes the objects and then the items a job covers, the job's marker last, so that an
// interrupted purge is found again by purge.Sweep. Running it twice is harmless.
func (w *Worker) Purge(ctx context.Context, job store.PurgeJob) error {
	if err := purge.Job(job).Check(); err != nil {
		return err
	}
	prefix := blobstore.WebsitePrefix(job.Account, job.Website)
	switch {
	case job.Page != "":
		prefix = blobstore.PagePrefix(job.Account, job.Website, job.Page)
	case job.Test != "":
		prefix = blobstore.TestPrefix(job.Account, job.Website, job.Test)
	}
	objects, err := w.objects.DeletePrefix(ctx, prefix)
	if err != nil {
		return err
	}
	items, err := w.store.PurgeItems(ctx, job)
	if err != nil {
		return err
	}
	w.log.InfoContext(ctx, "purged", "account", job.Account, "website", job.Website, "page", job.Page,
		"test", job.Test, "items", items, "objects", objects)
	return nil
}
