// Package event records the changes people must hear of: a budget's status, a multistep
// test's state, a failed run, a page's daily audit failing or recovering, a page's
// user-experience assessment. Each is detected where its state is computed (after an audit, a
// run, a collection), by comparing it with the state last recorded; the change and its event
// are written together, once, under a conditional write, so that a redelivered message or a
// rerun of the day records nothing twice. Recorded events are queued for the notifier.
package event

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/store"
)

// The event types.
const (
	BudgetStatusChanged   = "budget.status_changed"
	MultistepStateChanged = "multistep.state_changed"
	MultistepRunFailed    = "multistep.run_failed"
	AuditFailing          = "audit.failing"
	AuditRecovered        = "audit.recovered"
	UXAssessmentChanged   = "ux.assessment_changed"
	RegressionDetected    = "regression.detected"
	RegressionRecovered   = "regression.recovered"
	// IncidentVerdict is an incident's field verdict: a follow-up of its regression.detected
	// event, delivered in its thread, never an alert of its own.
	IncidentVerdict = "incident.verdict"
	// ChannelFailing is a channel whose last model.ChannelFailingAfter deliveries failed;
	// ChannelRecovered the same channel delivering again.
	ChannelFailing   = "channel.failing"
	ChannelRecovered = "channel.recovered"
	// ChannelTest is the sample event a channel's test sends; it is never recorded.
	ChannelTest = "channel.test"
	// DailyDigest is a channel's daily message gathering the day's events; never recorded.
	DailyDigest = "digest"
)

// Types are the event types a channel can subscribe to and the events list can filter on.
var Types = []string{BudgetStatusChanged, MultistepStateChanged, MultistepRunFailed, AuditFailing, AuditRecovered, UXAssessmentChanged,
	RegressionDetected, RegressionRecovered, IncidentVerdict, ChannelFailing, ChannelRecovered}

// Known tells whether t is an event type.
func Known(t string) bool { return slices.Contains(Types, t) }

// Enqueuer queues a recorded event for delivery; *notify.Queue is one.
type Enqueuer interface {
	Enqueue(ctx context.Context, w model.Website, ev model.Event) error
}

// Recorder records changes of watched states and queues their events.
type Recorder struct {
	store *store.Store
	queue Enqueuer
	log   *slog.Logger
}

// NewRecorder returns a Recorder over the table, queuing events to q.
func NewRecorder(st *store.Store, q Enqueuer, log *slog.Logger) *Recorder {
	return &Recorder{store: st, queue: q, log: log}
}

// Decision is what a watcher makes of a state: its value (and day) now, and the event of the
// change when it is one worth telling (nil records the new value silently, as on a first
// observation).
type Decision struct {
	Value, Day string
	Event      *model.Event
}

// Observe reads a watched state, lets decide judge it, and records the change it decides on
// with its event, which it then queues. A state that is already as decided records nothing
// (a repeated detection); only its event is queued again if queuing it failed before. A state
// changed meanwhile by another worker is read and judged again. A website, page, budget or
// test deleted meanwhile takes nothing and is not an error.
func (r *Recorder) Observe(ctx context.Context, w model.Website, key model.StateKey, decide func(st model.State) Decision) error {
	for range 5 {
		st, err := r.store.WatchedState(ctx, w, key)
		if err != nil {
			return err
		}
		d := decide(st)
		if d.Value == st.Value && d.Day == st.Day {
			return r.flush(ctx, w, st)
		}
		next, err := r.store.ChangeState(ctx, w, st, d.Value, d.Day, d.Event)
		if errors.Is(err, model.ErrChanged) {
			continue
		}
		if model.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.Event != nil {
			r.log.InfoContext(ctx, "event recorded", "website", w.ID, "event", d.Event.ID, "type", d.Event.Type, "summary", d.Event.Summary)
		}
		return r.flush(ctx, w, next)
	}
	return fmt.Errorf("state %s kept changing", key)
}

// flush queues a state's last event if it is not queued yet.
func (r *Recorder) flush(ctx context.Context, w model.Website, st model.State) error {
	if st.Unsent == "" {
		return nil
	}
	ev, err := r.store.Event(ctx, w, st.Unsent)
	if model.IsNotFound(err) {
		return nil // expired
	}
	if err != nil {
		return err
	}
	if err := r.queue.Enqueue(ctx, w, ev); err != nil {
		return fmt.Errorf("queue event %s: %w", ev.ID, err)
	}
	return r.store.MarkEventQueued(ctx, w, st)
}
