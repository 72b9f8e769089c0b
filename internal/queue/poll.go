package queue

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// BatchHandler handles a batch of SQS messages the way an SQS-triggered Lambda does, reporting
// the messages it could not handle as batch item failures.
type BatchHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Poll receives batches of up to batchSize messages until ctx ends and hands each to handle,
// as Lambda's event source mapping with ReportBatchItemFailures does: the messages handled are
// deleted; the failed ones (all of them when handle returns an error) become visible again
// after the visibility timeout, and the queue's redrive policy moves them to the dead-letter
// queue after its maximum receives.
//
// Cancelling ctx stops it: a receive under way is not abandoned (the queue would hand its
// messages to a connection nobody reads, hiding them for a visibility timeout) but its batch is
// handed back; a batch being handled sees ctx cancelled, and what it could not finish is retried.
func (q *Queue) Poll(ctx context.Context, batchSize int, handle BatchHandler, log *slog.Logger) {
	work := context.WithoutCancel(ctx)
	for ctx.Err() == nil {
		out, err := q.sqs.ReceiveMessage(work, &sqs.ReceiveMessageInput{
			QueueUrl:            aws.String(q.url),
			MaxNumberOfMessages: int32(batchSize),
			WaitTimeSeconds:     1, // short, so that a stop waits at most a second
			// The stand-in honours only the older AttributeNames for the receive count.
			AttributeNames:              []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil {
			if ctx.Err() == nil {
				log.Error("receive messages", "queue", q.url, "err", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		if len(out.Messages) == 0 {
			continue
		}
		ev := events.SQSEvent{Records: make([]events.SQSMessage, len(out.Messages))}
		for i, m := range out.Messages {
			ev.Records[i] = events.SQSMessage{
				MessageId:     aws.ToString(m.MessageId),
				ReceiptHandle: aws.ToString(m.ReceiptHandle),
				Body:          aws.ToString(m.Body),
				Attributes:    m.Attributes,
			}
		}
		if ctx.Err() != nil {
			// Stopped while receiving: hand the batch back at once rather than leaving it
			// hidden for a visibility timeout.
			q.release(work, out.Messages, log)
			return
		}
		resp, err := handle(ctx, ev)
		if err != nil {
			log.Error("handle batch; every message will be retried", "queue", q.url, "err", err)
			continue
		}
		failed := make(map[string]bool, len(resp.BatchItemFailures))
		for _, f := range resp.BatchItemFailures {
			failed[f.ItemIdentifier] = true
		}
		var done []sqstypes.DeleteMessageBatchRequestEntry
		for _, m := range out.Messages {
			if !failed[aws.ToString(m.MessageId)] {
				done = append(done, sqstypes.DeleteMessageBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle})
			}
		}
		if len(done) == 0 {
			continue
		}
		_, err = q.sqs.DeleteMessageBatch(work, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.url), Entries: done})
		if err != nil {
			log.Error("delete handled messages", "queue", q.url, "err", err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// release makes received messages visible again at once.
func (q *Queue) release(ctx context.Context, msgs []sqstypes.Message, log *slog.Logger) {
	entries := make([]sqstypes.ChangeMessageVisibilityBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = sqstypes.ChangeMessageVisibilityBatchRequestEntry{Id: m.MessageId, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}
	}
	_, err := q.sqs.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
	if err != nil {
		log.Error("hand back received messages", "queue", q.url, "err", err)
	}
}
