// Package eventtest keeps in memory what an event.Recorder queues, for tests that read what
// was recorded without a notification queue.
package eventtest

import (
	"context"
	"sync"

	"github.com/openvitals/openvitals/internal/model"
)

// Queue is a Recorder's queue that keeps the events it is given, in order; safe for
// concurrent use.
type Queue struct {
	mu     sync.Mutex
	events []model.Event
}

// Enqueue keeps ev.
func (q *Queue) Enqueue(_ context.Context, _ model.Website, ev model.Event) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.events = append(q.events, ev)
	return nil
}

// Events are the events queued since the start or the last Reset.
func (q *Queue) Events() []model.Event {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]model.Event(nil), q.events...)
}

// Summaries are the queued events' summaries, in order.
func (q *Queue) Summaries() []string {
	var out []string
	for _, ev := range q.Events() {
		out = append(out, ev.Summary)
	}
	return out
}

// Reset forgets the events queued so far.
func (q *Queue) Reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.events = nil
}
