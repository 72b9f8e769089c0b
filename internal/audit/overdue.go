package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Overdue ends or queues again the series tests that have had no outcome for deadline (the
// audit queue's Settings.Deadline) since their audit was last queued or began, when SQS will
// not deliver their message any more. A test whose audit never began, and that no sweep queued
// again before, is queued again: its message may have been lost. Any other ends failed, saying
// how long it had no result. The pending markers of tests that ended or went with their
// website are dropped. now is the sweep's time.
func (s *Queue) Overdue(ctx context.Context, now time.Time, deadline time.Duration) (queue.Swept, error) {
	return s.sweepSeries(ctx, now, func(t model.SeriesTest) sweepAction {
		since := lastSign(t.Queued, t.Started)
		switch {
		case now.Sub(since) < deadline:
			return leave
		case t.Status == model.RunQueued && t.Requeued == 0:
			return requeueCounted
		default:
			return failOverdue(now.Sub(since))
		}
	})
}

// Requeue queues again the audit of every series test that has no outcome, whatever its age:
// the local service does so when it starts, as the SQS stand-in lost the messages of the run
// before. A message of an earlier queuing that is still delivered is not audited (see
// store.SeriesTest.Queued), so queuing again never audits a test twice.
func (s *Queue) Requeue(ctx context.Context, now time.Time) (queue.Swept, error) {
	return s.sweepSeries(ctx, now, func(model.SeriesTest) sweepAction { return requeueUncounted })
}

// sweepAction is what a sweep does with a test without an outcome: leave it, queue its audit
// again (counted as a sweep's requeue or not), or end it failed with a reason.
type sweepAction struct {
	requeue, counted bool
	fail             string
}

var (
	leave            = sweepAction{}
	requeueCounted   = sweepAction{requeue: true, counted: true}
	requeueUncounted = sweepAction{requeue: true}
)

// failOverdue ends work that has had no result for waited.
func failOverdue(waited time.Duration) sweepAction {
	return sweepAction{fail: fmt.Sprintf("no result after %s: the audit's message was lost, or every attempt was stopped before it could record an error",
		waited.Truncate(time.Second))}
}

// lastSign is the latest of the times work was queued or began (zero when neither is known).
func lastSign(times ...*time.Time) time.Time {
	var last time.Time
	for _, t := range times {
		if t != nil && t.After(last) {
			last = *t
		}
	}
	return last
}

// sweepSeries applies decide to every pending series test.
func (s *Queue) sweepSeries(ctx context.Context, now time.Time, decide func(model.SeriesTest) sweepAction) (queue.Swept, error) {
	return queue.SweepEach(ctx, s.store.PendingSeriesTests, func(p store.PendingSeriesTest) string { return "test " + p.Test },
		func(p store.PendingSeriesTest, swept *queue.Swept) error {
			return s.sweepTest(ctx, now, p, decide, swept)
		})
}

func (s *Queue) sweepTest(ctx context.Context, now time.Time, p store.PendingSeriesTest, decide func(model.SeriesTest) sweepAction, swept *queue.Swept) error {
	w, err := s.store.Website(ctx, p.Account, p.Website)
	var t model.SeriesTest
	if err == nil {
		t, err = s.store.SeriesTest(ctx, w, p.Test)
	}
	if model.IsNotFound(err) || err == nil && t.IsFinished() {
		swept.Dropped++
		return s.store.DropPendingSeriesTest(ctx, p)
	}
	if err != nil {
		return err
	}
	act := decide(t)
	switch {
	case act.fail != "":
		t.Status, t.Error, t.Finished = model.RunFailed, act.fail, &now
		ended, err := s.store.FinishSeriesTest(ctx, w, t)
		if err != nil && !model.IsNotFound(err) {
			return err
		}
		if ended {
			swept.Failed++
			s.log.WarnContext(ctx, "series test ended without a result", "website", w.ID, "series", t.Series, "test", t.ID, "reason", act.fail)
		}
	case act.requeue:
		// Recorded before it is sent: a message sent first would be older than the test's
		// queuing, and left unaudited.
		_, ok, err := s.store.RequeueSeriesTest(ctx, w, t.ID, now, act.counted)
		if model.IsNotFound(err) || err == nil && !ok {
			return nil // ended or gone meanwhile: its marker went with it
		}
		if err != nil {
			return err
		}
		job := Job{Account: w.Account, Website: w.ID, Page: t.Page, Device: t.Device, Queued: now, Series: t.Series, Test: t.ID}
		if err := s.queue.Send(ctx, job); err != nil {
			return err
		}
		swept.Requeued++
		s.log.InfoContext(ctx, "series test queued again", "website", w.ID, "series", t.Series, "test", t.ID, "status", t.Status)
	}
	return nil
}
