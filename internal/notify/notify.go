// Package notify queues the delivery of recorded events to a website's channels. The
// notifyworker package consumes the queue: a message names one event and, for a retry, the one
// channel to try again.
//
// Delivery is at least once: an event is queued after it is recorded (and again if queuing
// failed, by the next detection of its state), and a channel that fails gets the same event
// again, with the same webhook-id, after an exponential backoff, for RetryWindow; then the
// message goes to the dead-letter queue.
package notify

import (
	"context"
	"errors"
	"time"

	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Job is the body of a notification message.
type Job struct {
	Account string `json:"account"`
	Website string `json:"website"`
	// Event is the event's key (store.EventKey).
	Event string `json:"event"`
	// Channel is set on a retry, and on a channel's test: only it is tried.
	Channel string `json:"channel,omitempty"`
	// Sample sends the sample event (event.Sample) to Channel.
	Sample bool `json:"sample,omitempty"`
	// Digest sends Channel its daily digest: the events since its last one.
	Digest bool `json:"digest,omitempty"`
	// Attempt is the attempt this message makes for Channel (1 for the first).
	Attempt int `json:"attempt,omitempty"`
	// First is when the first attempt was made; retries stop RetryWindow after it.
	First time.Time `json:"first,omitzero"`
	// Due is when the attempt is due: a message that arrives earlier (SQS delays at most 15
	// minutes, a Retry-After may ask for more) waits again.
	Due time.Time `json:"due,omitzero"`
}

// Check tells whether a message names what to deliver.
func (j Job) Check() error {
	switch {
	case j.Account == "" || j.Website == "":
		return errors.New("a notification needs account and website")
	case j.Event == "" && !j.Sample && !j.Digest:
		return errors.New("a notification needs an event")
	case (j.Sample || j.Digest || j.Attempt > 1) && j.Channel == "":
		return errors.New("a retry, a test or a digest needs its channel")
	}
	return nil
}

// RetryWindow is how long a failing channel is retried for an event.
const RetryWindow = 24 * time.Hour

// Backoff is the wait before attempt (2 or more): 30 s doubled each time, at most 1 hour.
func Backoff(attempt int) time.Duration {
	d := 30 * time.Second
	for i := 2; i < attempt && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// Queue queues notifications.
type Queue struct {
	q      queue.Of[Job]
	gather time.Duration
}

// NewQueue returns a Queue sending to q.
func NewQueue(q *queue.Queue) *Queue { return &Queue{q: queue.Typed[Job](q), gather: IncidentGather} }

// IncidentGather is how long an incident's regression.detected event waits before it is
// delivered, so that its message names the changes found meanwhile (a page's audits on both
// devices, its other sources) with it: the notifier composes it from the incident as it is
// then.
const IncidentGather = 10 * time.Minute

// Enqueue queues a recorded event for every channel of its website that takes it (an
// incident's detection after IncidentGather).
func (q *Queue) Enqueue(ctx context.Context, w model.Website, ev model.Event) error {
	j := Job{Account: w.Account, Website: w.ID, Event: store.EventKey(ev)}
	if ev.Incident != "" && ev.Type == event.RegressionDetected && q.gather > 0 {
		return q.EnqueueAt(ctx, j, ev.Occurred.Add(q.gather), time.Now())
	}
	return q.q.Send(ctx, j)
}

// SetGather sets how long an incident's detection waits (IncidentGather; 0 for none, as in
// tests that deliver at once).
func (q *Queue) SetGather(d time.Duration) { q.gather = d }

// EnqueueSample queues the sample event for one channel.
func (q *Queue) EnqueueSample(ctx context.Context, w model.Website, channel string) error {
	return q.q.Send(ctx, Job{Account: w.Account, Website: w.ID, Channel: channel, Sample: true, Attempt: 1})
}

// EnqueueDigests queues the daily digest of every channel of a website that asked for one (the
// daily fan-out does so with the website's share of the day's audits), and returns how many
// it queued.
func (q *Queue) EnqueueDigests(ctx context.Context, st *store.Store, w model.Website) (int, error) {
	channels, err := st.Channels(ctx, w)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range channels {
		if !c.Digest {
			continue
		}
		if err := q.q.Send(ctx, Job{Account: w.Account, Website: w.ID, Channel: c.ID, Digest: true, Attempt: 1}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// EnqueueAt queues a job due at due (delivered at most queue.MaxDelay from now: an earlier
// arrival waits again).
func (q *Queue) EnqueueAt(ctx context.Context, j Job, due, now time.Time) error {
	j.Due = due
	return q.q.SendAfter(ctx, j, min(max(due.Sub(now), 0), queue.MaxDelay))
}
