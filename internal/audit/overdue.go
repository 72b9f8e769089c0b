package audit

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// seriesWork is what sweeping the series tests' audits reads and writes.
func (s *Queue) seriesWork() queue.PendingWork[store.PendingSeriesTest, model.SeriesTest, Job] {
	return queue.PendingWork[store.PendingSeriesTest, model.SeriesTest, Job]{
		Name: "series test", Message: "the audit's message",
		List:    s.store.PendingSeriesTests,
		Drop:    s.store.DropPendingSeriesTest,
		Website: s.store.Website,
		Get: func(ctx context.Context, w model.Website, p store.PendingSeriesTest) (model.SeriesTest, error) {
			return s.store.SeriesTest(ctx, w, p.Test)
		},
		Finished: model.SeriesTest.IsFinished,
		Waiting: func(t model.SeriesTest) queue.Waiting {
			return queue.Waiting{Since: queue.Latest(t.Queued, t.Started), Status: t.Status, NeverBegan: t.Status == model.RunQueued, Requeued: t.Requeued}
		},
		Attrs: func(t model.SeriesTest) []any { return []any{"series", t.Series, "test", t.ID} },
		MarkFailed: func(ctx context.Context, w model.Website, t model.SeriesTest, now time.Time, reason string) (bool, error) {
			t.Status, t.Error, t.Finished = model.RunFailed, reason, &now
			return s.store.FinishSeriesTest(ctx, w, t)
		},
		MarkQueued: func(ctx context.Context, w model.Website, t model.SeriesTest, now time.Time, counted bool) (bool, error) {
			_, ok, err := s.store.RequeueSeriesTest(ctx, w, t.ID, now, counted)
			return ok, err
		},
		Job: func(w model.Website, t model.SeriesTest, now time.Time) Job {
			return Job{Account: w.Account, Website: w.ID, Page: t.Page, Device: t.Device, Queued: now, Series: t.Series, Test: t.ID}
		},
		Queue: s.queue,
		Log:   s.log,
	}
}
