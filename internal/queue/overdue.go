package queue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// Waiting is what an overdue sweep decides on about a piece of pending work.
type Waiting struct {
	// Since is when it was last queued or began; Status its status, for the logs.
	Since  time.Time
	Status string
	// NeverBegan tells that it is queued and no delivery began it; Requeued counts the sweeps
	// that queued it again.
	NeverBegan bool
	Requeued   int
}

// PendingWork is one kind of pending work W, each piece marked pending by a marker P and
// queued as a message J (the audits of series tests, the multistep runs): what an
// OverdueSweep reads and writes of it.
type PendingWork[P pending, W any, J Message] struct {
	// Name names the work in the logs ("series test"); Message names its message in a
	// failure's reason ("the audit's message").
	Name, Message string
	// List lists the markers; Drop drops one.
	List func(context.Context) ([]P, error)
	Drop func(context.Context, P) error
	// Website reads a marker's website; Get its work (model.ErrNotFound when either is gone).
	Website  func(ctx context.Context, account, id string) (model.Website, error)
	Get      func(context.Context, model.Website, P) (W, error)
	Finished func(W) bool
	Waiting  func(W) Waiting
	// Attrs name the work in the logs, after its website.
	Attrs func(W) []any
	// MarkFailed records work ended failed with reason at now, and tells whether it ended it (not
	// when it had ended or gone meanwhile).
	MarkFailed func(ctx context.Context, w model.Website, work W, now time.Time, reason string) (bool, error)
	// MarkQueued records work queued again at now, and tells whether it did (not when it had
	// ended or gone meanwhile); Job is its message then.
	MarkQueued func(ctx context.Context, w model.Website, work W, now time.Time, counted bool) (bool, error)
	Job        func(w model.Website, work W, now time.Time) J
	Queue      Of[J]
	Log        *slog.Logger
}

// OverdueSweep sweeps one kind of pending work. A sweep drops the markers of work that ended or
// went with its website, and for the rest ends it failed, queues it again (recorded first: a
// message sent first would be older than the work's queuing, and left undone) or leaves it.
type OverdueSweep[P pending, W any, J Message] struct {
	work PendingWork[P, W, J]
}

// NewOverdueSweep returns the sweep of work.
func NewOverdueSweep[P pending, W any, J Message](work PendingWork[P, W, J]) *OverdueSweep[P, W, J] {
	return &OverdueSweep[P, W, J]{work: work}
}

// pending is a marker of pending work: it names the work's website, and itself in errors.
type pending interface {
	Site() model.SiteRef
	String() string
}

// sweepAction is what a sweep does with work without an outcome: leave it, queue it again
// (counted as a sweep's requeue or not), or end it failed with a reason.
type sweepAction struct {
	requeue, counted bool
	fail             string
}

// Overdue ends or queues again the work that has had no outcome for deadline (its queue's
// Settings.Deadline) since it was last queued or began, when SQS will not deliver its message
// any more. Work that never began, and that no sweep queued again before, is queued again: its
// message may have been lost. Any other ends failed, saying how long it had no result. now is
// the sweep's time.
func (o *OverdueSweep[P, W, J]) Overdue(ctx context.Context, now time.Time, deadline time.Duration) (Swept, error) {
	return o.sweep(ctx, now, func(work W) sweepAction {
		st := o.work.Waiting(work)
		waited := now.Sub(st.Since)
		switch {
		case waited < deadline:
			return sweepAction{}
		case st.NeverBegan && st.Requeued == 0:
			return sweepAction{requeue: true, counted: true}
		default:
			return sweepAction{fail: fmt.Sprintf("no result after %s: %s was lost, or every attempt was stopped before it could record an error",
				waited.Truncate(time.Second), o.work.Message)}
		}
	})
}

// Requeue queues again all work that has no outcome, whatever its age, uncounted: the local
// service does so when it starts, as the SQS stand-in lost the messages of the run before. A
// message of an earlier queuing that is still delivered is dropped by its worker, so queuing
// again never does work twice.
func (o *OverdueSweep[P, W, J]) Requeue(ctx context.Context, now time.Time) (Swept, error) {
	return o.sweep(ctx, now, func(W) sweepAction { return sweepAction{requeue: true} })
}

func (o *OverdueSweep[P, W, J]) sweep(ctx context.Context, now time.Time, decide func(W) sweepAction) (Swept, error) {
	return SweepEach(ctx, o.work.List, P.String, func(p P, swept *Swept) error { return o.sweepOne(ctx, now, p, decide, swept) })
}

func (o *OverdueSweep[P, W, J]) sweepOne(ctx context.Context, now time.Time, p P, decide func(W) sweepAction, swept *Swept) error {
	site := p.Site()
	w, err := o.work.Website(ctx, site.Account, site.Website)
	var work W
	if err == nil {
		work, err = o.work.Get(ctx, w, p)
	}
	if model.IsNotFound(err) || err == nil && o.work.Finished(work) {
		swept.Dropped++
		return o.work.Drop(ctx, p)
	}
	if err != nil {
		return err
	}
	act := decide(work)
	attrs := append([]any{"website", w.ID}, o.work.Attrs(work)...)
	switch {
	case act.fail != "":
		ended, err := o.work.MarkFailed(ctx, w, work, now, act.fail)
		if err != nil && !model.IsNotFound(err) {
			return err
		}
		if ended && err == nil {
			swept.Failed++
			o.work.Log.WarnContext(ctx, o.work.Name+" ended without a result", append(attrs, "reason", act.fail)...)
		}
	case act.requeue:
		ok, err := o.work.MarkQueued(ctx, w, work, now, act.counted)
		if model.IsNotFound(err) || err == nil && !ok {
			return nil // ended or gone meanwhile: its marker went with it
		}
		if err != nil {
			return err
		}
		if err := o.work.Queue.Send(ctx, o.work.Job(w, work, now)); err != nil {
			return err
		}
		swept.Requeued++
		o.work.Log.InfoContext(ctx, o.work.Name+" queued again", append(attrs, "status", o.work.Waiting(work).Status)...)
	}
	return nil
}

// Latest is the latest of the times known (zero when none is).
func Latest(times ...*time.Time) time.Time {
	var last time.Time
	for _, t := range times {
		if t != nil && t.After(last) {
			last = *t
		}
	}
	return last
}
