// Package notifyworker consumes the notification queue: it delivers each event to the
// channels of its website that take it, records every attempt, and queues the retries of the
// channels that failed.
package notifyworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/channel"
	"github.com/openvitals/openvitals/internal/deliver"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/store"
)

// Worker delivers notifications.
type Worker struct {
	store  *store.Store
	keys   channel.Sealer
	sender *deliver.Sender
	queue  *notify.Queue
	// events records channels starting and stopping to fail.
	events *event.Recorder
	now    func() time.Time
	// backoff is the wait before an attempt (notify.Backoff; tests shorten it).
	backoff func(attempt int) time.Duration
	log     *slog.Logger
	handle  queue.BatchHandler
}

// NewWorker returns a Worker over the table, opening channels with keys, delivering with
// sender and queuing retries to q.
func NewWorker(st *store.Store, keys channel.Sealer, sender *deliver.Sender, q *notify.Queue, log *slog.Logger) *Worker {
	w := &Worker{store: st, keys: keys, sender: sender, queue: q, events: event.NewRecorder(st, q, log), now: time.Now, backoff: notify.Backoff, log: log}
	// The messages of a batch are delivered together: one slow receiver does not hold up
	// the events behind it.
	w.handle = queue.Batch(log, func(ctx context.Context, ds []queue.Delivery[notify.Job]) []string {
		failed := make([]bool, len(ds))
		var wg sync.WaitGroup
		for i, d := range ds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := w.Deliver(ctx, d.Body); err != nil {
					log.ErrorContext(ctx, "notification failed", "message", d.ID, "event", d.Body.Event, "channel", d.Body.Channel, "err", err)
					failed[i] = true
				}
			}()
		}
		wg.Wait()
		var ids []string
		for i, f := range failed {
			if f {
				ids = append(ids, ds[i].ID)
			}
		}
		return ids
	})
	return w
}

// HandleSQS is the notifier's Lambda handler.
func (w *Worker) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return w.handle(ctx, ev)
}

// errGaveUp fails a message whose channel kept failing for notify.RetryWindow, so that it
// goes to the dead-letter queue.
var errGaveUp = errors.New("gave up: the channel failed for 24 hours")

// Deliver carries out one notification message. An event whose state changed again before it
// was delivered is skipped: the later change is delivered instead (so a state that flips back
// and forth before the notifier gets to it is reported once, with its final state).
func (w *Worker) Deliver(ctx context.Context, j notify.Job) error {
	now := w.now()
	if !j.First.IsZero() && now.After(j.First.Add(notify.RetryWindow)) {
		return errGaveUp
	}
	if j.Due.After(now.Add(time.Second)) {
		return w.queue.EnqueueAt(ctx, j, j.Due, now) // early (SQS delays 15 minutes at most)
	}
	site, err := w.store.Website(ctx, j.Account, j.Website)
	if model.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if j.Digest {
		return w.digest(ctx, site, j, now)
	}
	var ev model.Event
	if j.Sample {
		ev = event.Sample(site, now)
	} else if ev, err = w.store.Event(ctx, site, j.Event); model.IsNotFound(err) {
		return nil // expired, or the website was purged
	} else if err != nil {
		return err
	}
	if ev.Type == event.RegressionDetected && ev.Incident != "" {
		ev = w.withIncident(ctx, site, ev)
	}
	if j.Channel != "" {
		c, err := w.store.Channel(ctx, site, j.Channel)
		if model.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return w.attempt(ctx, site, c, ev, j)
	}
	if st, err := w.store.WatchedState(ctx, site, model.StateKey(ev.State)); err != nil {
		return err
	} else if st.Version > ev.Version {
		w.log.InfoContext(ctx, "notification superseded by a later change", "website", site.ID, "event", ev.ID)
		return nil
	}
	channels, err := w.store.Channels(ctx, site)
	if err != nil {
		return err
	}
	errs := make([]error, len(channels))
	var wg sync.WaitGroup
	for i, c := range channels {
		if c.Digest || !channel.Takes(c, ev.Type) || c.ID == ev.Channel {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = w.attempt(ctx, site, c, ev, notify.Job{Account: j.Account, Website: j.Website, Event: j.Event, Channel: c.ID, Attempt: 1})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// digest sends a channel the events it takes that occurred since its last digest (the last
// day for its first), as one message; a day without any sends nothing.
func (w *Worker) digest(ctx context.Context, site model.Website, j notify.Job, now time.Time) error {
	c, err := w.store.Channel(ctx, site, j.Channel)
	if model.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	since := c.DigestSent
	if since.IsZero() {
		since = now.Add(-24 * time.Hour)
	}
	all, _, err := w.store.Events(ctx, site, model.EventFilter{From: model.Day(since)}, "", 0)
	if err != nil {
		return err
	}
	var evs []model.Event
	for _, ev := range all {
		if ev.Occurred.After(since) && channel.Takes(c, ev.Type) {
			evs = append(evs, ev)
		}
	}
	if len(evs) == 0 {
		return ignoreGone(w.store.MarkDigestSent(ctx, site, c.ID, now))
	}
	return w.attempt(ctx, site, c, event.NewDigest(site, c.ID, evs, now), j)
}

// attempt delivers ev to channel c once, records the attempt, and queues the next one when it
// failed in a way worth retrying (network, timeout, 408, 429, 5xx) within the retry window.
func (w *Worker) attempt(ctx context.Context, site model.Website, c model.Channel, ev model.Event, j notify.Job) error {
	if !j.Sample {
		if sent, err := w.store.Sent(ctx, site, c.ID, ev.ID); err != nil || sent {
			return err // delivered before (a redelivered message)
		}
	}
	now := w.now()
	attempt, first := max(j.Attempt, 1), j.First
	if first.IsZero() {
		first = now
	}
	t, err := channel.Open(ctx, w.keys, site, c)
	if err != nil {
		return err
	}
	var inReplyTo string
	if ev.Type == event.IncidentVerdict && ev.Incident != "" {
		// The verdict follows the incident's detection in the thread it began in this channel.
		if inReplyTo, err = w.store.SentMessage(ctx, site, c.ID, event.DetectionID(site, ev.Page, ev.Test, ev.Incident)); err != nil {
			return err
		}
	}
	res := w.sender.Send(ctx, c.Kind, t, site, ev, now, inReplyTo)
	d := model.Delivery{Event: ev.ID, EventType: ev.Type, At: now, Attempt: attempt, Status: res.Status, LatencyMS: res.Latency.Milliseconds()}
	log := w.log.With("website", site.ID, "channel", c.ID, "kind", c.Kind, "event", ev.ID, "attempt", attempt, "status", res.Status, "ms", d.LatencyMS)
	if res.Err == nil {
		if !j.Sample {
			if _, err := w.store.MarkSent(ctx, site, c.ID, ev.ID, res.MessageID); err != nil {
				return err
			}
		}
		if j.Digest {
			if err := ignoreGone(w.store.MarkDigestSent(ctx, site, c.ID, now)); err != nil {
				return err
			}
		}
		log.InfoContext(ctx, "notification delivered")
		if err := ignoreGone(w.store.RecordDelivery(ctx, site, c.ID, d, true)); err != nil {
			return err
		}
		if c.Failures > 0 || !c.FailingSince.IsZero() {
			c.Failures, c.FailingSince = 0, time.Time{}
			return w.events.Channel(ctx, site, c)
		}
		return nil
	}
	d.Error = res.Err.Error()
	wait := max(w.backoff(attempt+1), res.RetryAfter)
	retry := res.Retry && now.Add(wait).Before(first.Add(notify.RetryWindow))
	if retry {
		d.Retry = now.Add(wait)
	}
	if err := ignoreGone(w.store.RecordDelivery(ctx, site, c.ID, d, false)); err != nil {
		return err
	}
	// The channel's state is recorded whatever comes of it: its retry is queued all the same.
	stateErr := w.channelState(ctx, site, c.ID)
	log.WarnContext(ctx, "notification failed", "err", d.Error, "retry", d.Retry)
	switch {
	case retry:
		next := j
		next.Channel, next.Attempt, next.First = c.ID, attempt+1, first
		return errors.Join(stateErr, w.queue.EnqueueAt(ctx, next, d.Retry, now))
	case res.Retry:
		return errors.Join(stateErr, fmt.Errorf("channel %s: %w", c.ID, errGaveUp))
	}
	return stateErr // refused for good (4xx): retrying would not help
}

// withIncident has an incident's detection say the incident as it is now, with the changes
// found since it was recorded (see notify.IncidentGather); as recorded when it cannot be read.
func (w *Worker) withIncident(ctx context.Context, site model.Website, ev model.Event) model.Event {
	regs, _, err := w.store.Regressions(ctx, site, model.RegressionFilter{Page: ev.Page, Test: ev.Test}, "", 0)
	if err != nil {
		w.log.WarnContext(ctx, "incident not read: its event as recorded", "website", site.ID, "incident", ev.Incident, "err", err)
		return ev
	}
	for _, in := range regression.Incidents(site, regs) {
		if in.ID != ev.Incident {
			continue
		}
		ev.Summary = event.IncidentSummary(in, event.SubjectName(ctx, w.store, site, in.Members[0]), regression.Unit)
		if len(in.Members) > 1 {
			ev.Regression, ev.Metric = "", ""
			for _, r := range in.Members {
				if r.Device != ev.Device {
					ev.Device = ""
				}
			}
		}
	}
	return ev
}

// channelState records a channel's delivery state after a failed delivery, as the channel now
// counts its failures.
func (w *Worker) channelState(ctx context.Context, site model.Website, id string) error {
	c, err := w.store.Channel(ctx, site, id)
	if err != nil {
		return ignoreGone(err)
	}
	return w.events.Channel(ctx, site, c)
}

// ignoreGone makes a channel deleted meanwhile not an error.
func ignoreGone(err error) error {
	if model.IsNotFound(err) {
		return nil
	}
	return err
}
