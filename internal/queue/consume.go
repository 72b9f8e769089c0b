package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
)

// Message is the body of a message on one of openvitals' queues: a JSON document that can
// say whether it holds everything its consumer needs.
type Message interface {
	// Check returns an error naming what is missing or wrong; nil for a usable message.
	Check() error
}

// Delivery is one received message, decoded.
type Delivery[T Message] struct {
	// ID is the SQS message ID, which batch item failures name.
	ID string
	// Attempt is how many times SQS has delivered the message, this time included (1 on the
	// first delivery; 0 when the queue did not say).
	Attempt int
	// Body is the decoded message.
	Body T
}

// Each returns the Lambda handler of a queue whose messages are handled one at a time, in
// order: a message whose handle returns an error is reported as a batch item failure and
// comes back after the queue's visibility timeout (its dead-letter queue after the maximum
// receives). An unreadable message is reported the same way, never dropped, so that it ends
// in the dead-letter queue where an operator can see it.
func Each[T Message](log *slog.Logger, handle func(context.Context, Delivery[T]) error) BatchHandler {
	return Batch(log, func(ctx context.Context, ds []Delivery[T]) []string {
		var failed []string
		for _, d := range ds {
			if err := handle(ctx, d); err != nil {
				failed = append(failed, d.ID)
			}
		}
		return failed
	})
}

// Batch returns the Lambda handler of a queue whose messages are handled together: handle gets
// every readable message of the batch and returns the IDs of those that failed, which come
// back after the visibility timeout. Unreadable messages are reported as failed, as by Each.
func Batch[T Message](log *slog.Logger, handle func(context.Context, []Delivery[T]) (failed []string)) BatchHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		fail := func(id string) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		}
		ds := make([]Delivery[T], 0, len(ev.Records))
		for _, m := range ev.Records {
			d, err := decode[T](m)
			if err != nil {
				// Delivering it again will not make it readable: it goes to the dead-letter
				// queue after the queue's maximum receives.
				log.ErrorContext(ctx, "unreadable message; it goes to the dead-letter queue", "message", m.MessageId,
					"source", m.EventSourceARN, "err", err)
				fail(m.MessageId)
				continue
			}
			ds = append(ds, d)
		}
		if len(ds) > 0 {
			for _, id := range handle(ctx, ds) {
				fail(id)
			}
		}
		return resp, nil
	}
}

// decode reads one SQS message into a Delivery.
func decode[T Message](m events.SQSMessage) (Delivery[T], error) {
	d := Delivery[T]{ID: m.MessageId}
	d.Attempt, _ = strconv.Atoi(m.Attributes["ApproximateReceiveCount"])
	if err := json.Unmarshal([]byte(m.Body), &d.Body); err != nil {
		return d, fmt.Errorf("decode: %w", err)
	}
	if err := d.Body.Check(); err != nil {
		return d, err
	}
	return d, nil
}
