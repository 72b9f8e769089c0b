// Package queue sends JSON messages to SQS queues and, for the local service, plays the part of
// Lambda's SQS event source mapping.
package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Queue is one SQS queue.
type Queue struct {
	sqs *sqs.Client
	url string
}

// Open returns the queue named by nameOrURL: a full queue URL (as CDK hands it to a Lambda) or
// a queue name, which is looked up.
func Open(ctx context.Context, client *sqs.Client, nameOrURL string) (*Queue, error) {
	if strings.HasPrefix(nameOrURL, "http://") || strings.HasPrefix(nameOrURL, "https://") {
		return &Queue{sqs: client, url: nameOrURL}, nil
	}
	out, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(nameOrURL)})
	if err != nil {
		return nil, fmt.Errorf("find queue %s: %w", nameOrURL, err)
	}
	return &Queue{sqs: client, url: aws.ToString(out.QueueUrl)}, nil
}

// URL is the queue's URL.
func (q *Queue) URL() string { return q.url }

// Send sends v as one JSON message.
func (q *Queue) Send(ctx context.Context, v any) error { return q.SendAfter(ctx, v, 0) }

// MaxDelay is the longest SQS delays a message.
const MaxDelay = 15 * time.Minute

// SendAfter sends v as one JSON message that is delivered no sooner than delay from now
// (at most MaxDelay; a standard queue only).
func (q *Queue) SendAfter(ctx context.Context, v any, delay time.Duration) error {
	if delay < 0 || delay > MaxDelay {
		return fmt.Errorf("send to %s: delay %s out of 0 to %s", q.url, delay, MaxDelay)
	}
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = q.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.url), MessageBody: aws.String(string(body)),
		DelaySeconds: int32(delay.Round(time.Second) / time.Second)})
	if err != nil {
		return fmt.Errorf("send to %s: %w", q.url, err)
	}
	return nil
}

// MaxReceives is how many times SQS delivers a message of any of openvitals' queues before
// moving it to the queue's dead-letter queue, locally as in the CDK stack; progress tracking
// knows a job's last attempt by it.
const MaxReceives = 3

// Settings are how a queue created by Create behaves.
type Settings struct {
	// VisibilityTimeout is how long a received message stays hidden before it is delivered
	// again; it must exceed the time its consumer needs.
	VisibilityTimeout time.Duration
	// MaxReceives is how many deliveries a message gets before it moves to the dead-letter
	// queue, named after the queue with a "-dlq" suffix (before ".fifo" for a FIFO queue).
	MaxReceives int
	// Retention is how long the queue keeps a message that was not consumed: SQS's default of
	// DefaultRetention when 0.
	Retention time.Duration
	// Delay is how long the queue keeps every message hidden after it is sent (0 to
	// MaxDelay).
	Delay time.Duration
}

// DefaultRetention is how long SQS keeps a message unless its queue says otherwise.
const DefaultRetention = 4 * 24 * time.Hour

// MaxRetention is the longest SQS keeps a message.
const MaxRetention = 14 * 24 * time.Hour

// Deadline is the longest a message of the queue can take from its first delivery to its last
// attempt's end: a visibility timeout for each of its deliveries. Work that has had no outcome
// for that long since it was queued or began will not get one from its message any more: it
// was lost, or every delivery's consumer was stopped before it could record an outcome.
func (s Settings) Deadline() time.Duration {
	return s.VisibilityTimeout * time.Duration(s.MaxReceives)
}

// Settings reads the queue's own settings, as whoever created it set them (the CDK stack in
// AWS, Create locally): its visibility timeout, its retention, and the maximum receives of its
// redrive policy (1 for a queue without one: a message failed once is gone).
func (q *Queue) Settings(ctx context.Context) (Settings, error) {
	out, err := q.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.url),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameVisibilityTimeout, sqstypes.QueueAttributeNameRedrivePolicy,
			sqstypes.QueueAttributeNameMessageRetentionPeriod,
		},
	})
	if err != nil {
		return Settings{}, fmt.Errorf("queue settings %s: %w", q.url, err)
	}
	secs, err := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameVisibilityTimeout)])
	if err != nil {
		return Settings{}, fmt.Errorf("queue settings %s: visibility timeout: %w", q.url, err)
	}
	s := Settings{VisibilityTimeout: time.Duration(secs) * time.Second, MaxReceives: 1, Retention: DefaultRetention}
	if raw := out.Attributes[string(sqstypes.QueueAttributeNameMessageRetentionPeriod)]; raw != "" {
		kept, err := strconv.Atoi(raw)
		if err != nil {
			return Settings{}, fmt.Errorf("queue settings %s: retention: %w", q.url, err)
		}
		s.Retention = time.Duration(kept) * time.Second
	}
	if raw := out.Attributes[string(sqstypes.QueueAttributeNameRedrivePolicy)]; raw != "" {
		var redrive struct {
			// SQS writes the count as a number; some stand-ins echo the string they were given.
			MaxReceiveCount json.Number `json:"maxReceiveCount"`
		}
		if err := json.Unmarshal([]byte(raw), &redrive); err != nil {
			return Settings{}, fmt.Errorf("queue settings %s: redrive policy: %w", q.url, err)
		}
		n, err := strconv.Atoi(redrive.MaxReceiveCount.String())
		if err != nil || n < 1 {
			return Settings{}, fmt.Errorf("queue settings %s: redrive policy's maxReceiveCount %q", q.url, redrive.MaxReceiveCount)
		}
		s.MaxReceives = n
	}
	return s, nil
}

// Delay reads the queue's own delivery delay, as whoever created it set it.
func (q *Queue) Delay(ctx context.Context) (time.Duration, error) {
	out, err := q.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameDelaySeconds},
	})
	if err != nil {
		return 0, fmt.Errorf("queue delay %s: %w", q.url, err)
	}
	secs, err := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameDelaySeconds)])
	if err != nil {
		return 0, fmt.Errorf("queue delay %s: %w", q.url, err)
	}
	return time.Duration(secs) * time.Second, nil
}

// FIFO tells whether a queue name is a FIFO queue's.
func FIFO(name string) bool { return strings.HasSuffix(name, ".fifo") }

// dlqName names a queue's dead-letter queue.
func dlqName(name string) string {
	if base, ok := strings.CutSuffix(name, ".fifo"); ok {
		return base + "-dlq.fifo"
	}
	return name + "-dlq"
}

// Create makes a queue and its dead-letter queue if they do not exist, and returns the queue.
// The local service and tests use it; in AWS the CDK stack owns the queues.
func Create(ctx context.Context, client *sqs.Client, name string, s Settings) (*Queue, error) {
	dlqAttrs := map[string]string{"MessageRetentionPeriod": "1209600"}
	if FIFO(name) {
		dlqAttrs["FifoQueue"] = "true"
	}
	dlq, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(dlqName(name)), Attributes: dlqAttrs})
	if err != nil {
		return nil, fmt.Errorf("create queue %s: %w", dlqName(name), err)
	}
	attrs, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: dlq.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return nil, fmt.Errorf("read queue %s: %w", dlqName(name), err)
	}
	redrive, _ := json.Marshal(map[string]string{
		"deadLetterTargetArn": attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)],
		"maxReceiveCount":     strconv.Itoa(s.MaxReceives),
	})
	attrs2 := map[string]string{
		"VisibilityTimeout": strconv.Itoa(int(s.VisibilityTimeout / time.Second)),
		"RedrivePolicy":     string(redrive),
		"DelaySeconds":      strconv.Itoa(int(s.Delay / time.Second)),
	}
	if s.Retention != 0 {
		attrs2["MessageRetentionPeriod"] = strconv.Itoa(int(s.Retention / time.Second))
	}
	if FIFO(name) {
		attrs2["FifoQueue"] = "true"
	}
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs2})
	if err != nil {
		return nil, fmt.Errorf("create queue %s: %w", name, err)
	}
	return &Queue{sqs: client, url: aws.ToString(out.QueueUrl)}, nil
}

// Depth reports how many messages wait in the queue and how many are being processed.
func (q *Queue) Depth(ctx context.Context) (visible, inFlight int, err error) {
	out, err := q.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.url),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		return 0, 0, fmt.Errorf("queue depth %s: %w", q.url, err)
	}
	visible, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	inFlight, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return visible, inFlight, nil
}

// SendBatch sends each value as one JSON message, ten to a request. It returns how many were
// sent; on error, the first sent of the values were sent and the rest were not.
func (q *Queue) SendBatch(ctx context.Context, values []any) (int, error) {
	sent := 0
	for start := 0; start < len(values); start += 10 {
		batch := values[start:min(start+10, len(values))]
		if err := q.sendTen(ctx, batch, 0); err != nil {
			return sent, err
		}
		sent += len(batch)
	}
	return sent, nil
}

// sendersAtOnce is how many SendMessageBatch requests SendAll has under way at once: SQS
// answers each in some milliseconds, and a standard queue takes them in parallel.
const sendersAtOnce = 8

// SendAll sends each value as one JSON message delivered no sooner than delay from now (at
// most MaxDelay), ten to a request and sendersAtOnce requests at once. On error any of the
// values may have been sent: a caller sends them all again under a new claim (see the fanout
// package), never the rest alone.
func (q *Queue) SendAll(ctx context.Context, values []any, delay time.Duration) error {
	if delay < 0 || delay > MaxDelay {
		return fmt.Errorf("send to %s: delay %s out of 0 to %s", q.url, delay, MaxDelay)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, sendersAtOnce)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for start := 0; start < len(values) && ctx.Err() == nil; start += 10 {
		batch := values[start:min(start+10, len(values))]
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := q.sendTen(ctx, batch, delay); err != nil {
				select {
				case errs <- err:
					cancel() // the first error ends the others: all is sent again anyway
				default:
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// sendTen sends up to ten values in one SendMessageBatch request, each delivered no sooner
// than delay from now; an entry SQS refuses fails the whole call.
func (q *Queue) sendTen(ctx context.Context, batch []any, delay time.Duration) error {
	entries := make([]sqstypes.SendMessageBatchRequestEntry, len(batch))
	for i, v := range batch {
		body, err := json.Marshal(v)
		if err != nil {
			return err
		}
		entries[i] = sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(body)),
			DelaySeconds: int32(delay.Round(time.Second) / time.Second)}
	}
	out, err := q.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
	if err != nil {
		return fmt.Errorf("send batch to %s: %w", q.url, err)
	}
	if len(out.Failed) > 0 {
		f := out.Failed[0]
		return fmt.Errorf("send batch to %s: %d of %d failed, first: %s", q.url, len(out.Failed), len(batch), aws.ToString(f.Message))
	}
	return nil
}

// GroupMessage is a message for a FIFO queue: messages of one group are delivered in order, and
// a message whose DedupID was sent in the last five minutes is not sent again. A standard queue
// ignores both.
type GroupMessage struct {
	Group   string
	DedupID string
	Body    []byte
}

// SendGroups sends FIFO messages, ten to a request, and returns one error per message (nil for
// those sent).
func (q *Queue) SendGroups(ctx context.Context, msgs []GroupMessage) []error {
	errs := make([]error, len(msgs))
	for start := 0; start < len(msgs); start += 10 {
		batch := msgs[start:min(start+10, len(msgs))]
		entries := make([]sqstypes.SendMessageBatchRequestEntry, len(batch))
		for i, m := range batch {
			entries[i] = sqstypes.SendMessageBatchRequestEntry{
				Id: aws.String(strconv.Itoa(start + i)), MessageBody: aws.String(string(m.Body)),
			}
			if FIFO(q.url) { // a standard queue takes neither
				entries[i].MessageGroupId = aws.String(m.Group)
				entries[i].MessageDeduplicationId = aws.String(m.DedupID)
			}
		}
		out, err := q.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
		if err != nil {
			for i := range batch {
				errs[start+i] = fmt.Errorf("send batch to %s: %w", q.url, err)
			}
			continue
		}
		for _, f := range out.Failed {
			if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i >= start && i < len(msgs) {
				errs[i] = fmt.Errorf("send to %s: %s: %s", q.url, aws.ToString(f.Code), aws.ToString(f.Message))
			}
		}
	}
	return errs
}
