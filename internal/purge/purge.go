// Package purge removes everything a deleted website, page or multistep test left behind: its
// items in the table and its objects in the bucket. Deletions answer at once and queue a purge;
// the purge worker consumes that queue.
package purge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/blobstore"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Queue queues purge jobs.
type Queue struct{ q *queue.Queue }

// NewQueue returns a Queue sending to q.
func NewQueue(q *queue.Queue) *Queue { return &Queue{q: q} }

// Enqueue queues one purge job.
func (q *Queue) Enqueue(ctx context.Context, job store.PurgeJob) error { return q.q.Send(ctx, job) }

// Worker carries out purge jobs.
type Worker struct {
	store   *store.Store
	objects *blobstore.Bucket
	log     *slog.Logger
}

// NewWorker returns a Worker over the table and bucket.
func NewWorker(st *store.Store, objects *blobstore.Bucket, log *slog.Logger) *Worker {
	return &Worker{store: st, objects: objects, log: log}
}

// Purge removes the objects and then the items a job covers, the job's marker last, so that an
// interrupted purge is found again by Sweep. Running it twice is harmless.
func (w *Worker) Purge(ctx context.Context, job store.PurgeJob) error {
	if job.Account == "" || job.Website == "" {
		return fmt.Errorf("purge job without account or website: %+v", job)
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

// HandleSQS is the purge worker's Lambda handler: one job a message, failures reported per
// message so that only they are retried.
func (w *Worker) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, m := range ev.Records {
		var job store.PurgeJob
		err := json.Unmarshal([]byte(m.Body), &job)
		if err == nil {
			err = w.Purge(ctx, job)
		}
		if err != nil {
			w.log.ErrorContext(ctx, "purge failed", "message", m.MessageId, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

// Sweep queues again every pending purge requested more than grace ago: its message was lost,
// or its worker stopped half-way. It returns how many it queued.
func Sweep(ctx context.Context, st *store.Store, q *Queue, grace time.Duration) (int, error) {
	jobs, err := st.PendingPurges(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, job := range jobs {
		if time.Since(job.Requested) < grace {
			continue
		}
		if err := q.Enqueue(ctx, job); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
