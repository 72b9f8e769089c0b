package audit

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Overdue ends or queues again the series tests that have had no outcome for deadline (the
// audit queue's Settings.Deadline) since their audit was last queued or began, as
// queue.OverdueSweep.Overdue does. The pending markers of tests that ended or went with their
// website are dropped. now is the sweep's time.
func (s *Queue) Overdue(ctx context.Context, now time.Time, deadline time.Duration) (queue.Swept, error) {
	return s.seriesSweep().Overdue(ctx, now, deadline)
}

// Requeue queues again the audit of every series test that has no outcome, whatever its age:
// the local service does so when it starts, as the SQS stand-in lost the messages of the run
// before. A message of an earlier queuing that is still delivered is not audited (see
// store.SeriesTest.Queued), so queuing again never audits a test twice.
func (s *Queue) Requeue(ctx context.Context, now time.Time) (queue.Swept, error) {
	return s.seriesSweep().Requeue(ctx, now)
}

// seriesSweep is how the series tests' audits are swept.
func (s *Queue) seriesSweep() queue.OverdueSweep[store.PendingSeriesTest, model.SeriesTest, Job] {
	return queue.OverdueSweep[store.PendingSeriesTest, model.SeriesTest, Job]{
		Name: "series test", Message: "the audit's message",
		List:    s.store.PendingSeriesTests,
		Marker:  func(p store.PendingSeriesTest) string { return "test " + p.Test },
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
