package multistep

import (
	"context"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Overdue ends or queues again the runs that have had no outcome for deadline (the multistep
// queue's Settings.Deadline) since they were last queued or began, when SQS will not deliver
// their message any more. A run that never began, and that no sweep queued again before, is
// queued again: its message may have been lost. Any other ends failed, saying how long it had
// no result. The pending markers of runs that ended or went with their test or website are
// dropped. now is the sweep's time.
func (q *Queue) Overdue(ctx context.Context, now time.Time, deadline time.Duration) (queue.Swept, error) {
	return q.sweep(ctx, now, func(r model.Run) (requeue, counted bool, fail string) {
		since := r.Created
		for _, t := range []*time.Time{r.Queued, r.Started} {
			if t != nil && t.After(since) {
				since = *t
			}
		}
		switch {
		case now.Sub(since) < deadline:
			return false, false, ""
		case r.Status == model.RunQueued && r.Started == nil && r.Requeued == 0:
			return true, true, ""
		default:
			return false, false, fmt.Sprintf("no result after %s: the run's message was lost, or every attempt was stopped before it could record an error",
				now.Sub(since).Truncate(time.Second))
		}
	})
}

// Requeue queues again every run that has no outcome, whatever its age: the local service does
// so when it starts, as the SQS stand-in lost the messages of the run before. A message of an
// earlier queuing that is still delivered is not played (see store.Run.Queued).
func (q *Queue) Requeue(ctx context.Context, now time.Time) (queue.Swept, error) {
	return q.sweep(ctx, now, func(model.Run) (bool, bool, string) { return true, false, "" })
}

// sweep applies decide to every pending run: queue it again (counted as a sweep's requeue or
// not), end it failed with a reason, or leave it.
func (q *Queue) sweep(ctx context.Context, now time.Time, decide func(model.Run) (requeue, counted bool, fail string)) (queue.Swept, error) {
	return queue.SweepEach(ctx, q.store.PendingRuns, func(p store.PendingRun) string { return "run " + p.Run },
		func(p store.PendingRun, swept *queue.Swept) error { return q.sweepRun(ctx, now, p, decide, swept) })
}

func (q *Queue) sweepRun(ctx context.Context, now time.Time, p store.PendingRun, decide func(model.Run) (bool, bool, string), swept *queue.Swept) error {
	w, err := q.store.Website(ctx, p.Account, p.Website)
	var r model.Run
	if err == nil {
		r, err = q.store.GetRun(ctx, w, p.Test, p.Created, p.Run)
	}
	if model.IsNotFound(err) || err == nil && r.IsFinished() {
		swept.Dropped++
		return q.store.DropPendingRun(ctx, p)
	}
	if err != nil {
		return err
	}
	requeue, counted, fail := decide(r)
	switch {
	case fail != "":
		r.Status, r.Error, r.Finished = model.RunFailed, fail, now
		if err := q.store.UpdateRun(ctx, w, r); err != nil {
			if model.IsNotFound(err) {
				return nil
			}
			return err
		}
		swept.Failed++
		q.log.WarnContext(ctx, "multistep run ended without a result", "website", w.ID, "test", r.Test, "run", r.ID, "reason", fail)
	case requeue:
		// Recorded before it is sent: a message sent first would be older than the run's
		// queuing, and left unplayed.
		_, ok, err := q.store.RequeueRun(ctx, w, r.Test, r.Created, r.ID, now, counted)
		if model.IsNotFound(err) || err == nil && !ok {
			return nil // ended or gone meanwhile: its marker went with it
		}
		if err != nil {
			return err
		}
		job := Job{Account: w.Account, Website: w.ID, Test: r.Test, Run: r.ID, Created: r.Created, Queued: now}
		if err := q.queue.Send(ctx, job); err != nil {
			return err
		}
		swept.Requeued++
		q.log.InfoContext(ctx, "multistep run queued again", "website", w.ID, "test", r.Test, "run", r.ID, "status", r.Status)
	}
	return nil
}
