package queue

import (
	"context"
	"fmt"
	"time"
)

// Of is one pipeline's queue as its producers send to it: every message is of the pipeline's
// type and is checked as its consumer checks it (Message.Check) before it is sent, so that a
// message its worker would refuse is an error where it is made, not a dead letter later. Every
// pipeline's producer (audit, multistep, ux, notify, purge, fanout) sends through one.
type Of[T Message] struct{ q *Queue }

// Typed returns q as the queue of T messages.
func Typed[T Message](q *Queue) Of[T] { return Of[T]{q: q} }

// URL is the queue's URL.
func (o Of[T]) URL() string { return o.q.URL() }

// Send sends one message.
func (o Of[T]) Send(ctx context.Context, m T) error { return o.SendAfter(ctx, m, 0) }

// SendAfter sends one message, delivered no sooner than delay from now (Queue.SendAfter).
func (o Of[T]) SendAfter(ctx context.Context, m T, delay time.Duration) error {
	if err := m.Check(); err != nil {
		return fmt.Errorf("send to %s: %w", o.q.URL(), err)
	}
	return o.q.SendAfter(ctx, m, delay)
}

// SendBatch sends messages ten to a request, in order, and says how many were sent
// (Queue.SendBatch); none is sent when one fails its check.
func (o Of[T]) SendBatch(ctx context.Context, ms []T) (int, error) {
	values, err := o.checked(ms)
	if err != nil {
		return 0, err
	}
	return o.q.SendBatch(ctx, values)
}

// SendAll sends messages in parallel requests, all delivered no sooner than delay from now
// (Queue.SendAll); none is sent when one fails its check.
func (o Of[T]) SendAll(ctx context.Context, ms []T, delay time.Duration) error {
	values, err := o.checked(ms)
	if err != nil {
		return err
	}
	return o.q.SendAll(ctx, values, delay)
}

func (o Of[T]) checked(ms []T) ([]any, error) {
	values := make([]any, len(ms))
	for i, m := range ms {
		if err := m.Check(); err != nil {
			return nil, fmt.Errorf("send to %s: message %d: %w", o.q.URL(), i, err)
		}
		values[i] = m
	}
	return values, nil
}
