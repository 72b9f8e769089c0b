package multistep

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// runWork is what sweeping the runs reads and writes.
func (q *Queue) runWork() queue.PendingWork[store.PendingRun, model.Run, Job] {
	return queue.PendingWork[store.PendingRun, model.Run, Job]{
		Name: "multistep run", Message: "the run's message",
		List:    q.store.PendingRuns,
		Drop:    q.store.DropPendingRun,
		Website: q.store.Website,
		Get: func(ctx context.Context, w model.Website, p store.PendingRun) (model.Run, error) {
			return q.store.GetRun(ctx, w, p.Test, p.Created, p.Run)
		},
		Finished: model.Run.IsFinished,
		Waiting: func(r model.Run) queue.Waiting {
			return queue.Waiting{Since: queue.Latest(&r.Created, r.Queued, r.Started), Status: r.Status,
				NeverBegan: r.Status == model.RunQueued && r.Started == nil, Requeued: r.Requeued}
		},
		Attrs: func(r model.Run) []any { return []any{"test", r.Test, "run", r.ID} },
		MarkFailed: func(ctx context.Context, w model.Website, r model.Run, now time.Time, reason string) (bool, error) {
			r.Status, r.Error, r.Finished = model.RunFailed, reason, now
			err := q.store.UpdateRun(ctx, w, r)
			return err == nil, err
		},
		MarkQueued: func(ctx context.Context, w model.Website, r model.Run, now time.Time, counted bool) (bool, error) {
			_, ok, err := q.store.RequeueRun(ctx, w, r.Test, r.Created, r.ID, now, counted)
			return ok, err
		},
		Job: func(w model.Website, r model.Run, now time.Time) Job {
			return Job{Account: w.Account, Website: w.ID, Test: r.Test, Run: r.ID, Created: r.Created, Queued: now}
		},
		Queue: q.queue,
		Log:   q.log,
	}
}
