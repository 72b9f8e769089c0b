package main

import (
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// maxReceiveCount is how many times any message may be received (and fail) before SQS moves
// it to its queue's dead-letter queue. Five, as AWS advises for SQS event sources: the event
// source receives messages ahead of a consumer that is at its maximum concurrency and lets
// them go back, and each such receive counts, so with fewer a message could reach the
// dead-letter queue without ever having failed.
const maxReceiveCount = 5

// dlqRetentionDays is how long a dead-letter queue keeps a message: the longest SQS allows,
// time to look into a failure and redrive it.
const dlqRetentionDays = 14

// maxRetentionDays is the longest SQS keeps a message (queue.MaxRetention in the main
// module): what the audit and fan-out queues keep, so that a backlog outlives SQS's default of
// 4 days long enough for its alarm to be acted on.
const maxRetentionDays = 14

// workQueue is a pipeline's queue with its dead-letter queue and what the alarms and outputs
// say of them.
type workQueue struct {
	// name says what the queue carries ("audit"); it names the queue's environment variable,
	// construct ids, outputs and alarms.
	name       string
	queue, dlq awssqs.Queue
	props      queueProps
}

// queueProps are what differ between the work queues.
type queueProps struct {
	// visibility must be at least six times the consumer's timeout.
	visibility awscdk.Duration
	fifo       bool
	// delay hides every message for this long after it is sent (nil: none).
	delay awscdk.Duration
	// depth says when a backlog is a problem (see newQueueAlarms).
	depth depthAlarm
	// oldest, when set, says when the age of the oldest message is a problem (see
	// newQueueAlarms).
	oldest *ageAlarm
	// retentionDays is how long the queue keeps a message (SQS's default, 4 days, when 0).
	retentionDays float64
	// description and dlqDescription describe the queue and its dead-letter queue in the
	// stack's outputs.
	description, dlqDescription string
}

// newWorkQueue creates the queue name and its dead-letter queue (construct ids
// <Name>Queue and <Name>DLQ), both encrypted and refusing plain HTTP; a message received
// maxReceiveCount times moves to the DLQ. Physical names are left to CloudFormation so that
// several copies of the stack can live in one account.
func newWorkQueue(scope constructs.Construct, name string, p queueProps) *workQueue {
	var fifo *bool
	var contentDedup *bool
	var dedupScope awssqs.DeduplicationScope
	var throughput awssqs.FifoThroughputLimit
	if p.fifo {
		fifo = jsii.Bool(true)
		// Producers set MessageDeduplicationId themselves (a beacon's own id).
		contentDedup = jsii.Bool(false)
		// High-throughput FIFO: deduplication and ordering per message group (website), so the
		// queue scales with the number of sites instead of 300 messages a second in all.
		dedupScope = awssqs.DeduplicationScope_MESSAGE_GROUP
		throughput = awssqs.FifoThroughputLimit_PER_MESSAGE_GROUP_ID
	}
	dlq := awssqs.NewQueue(scope, jsii.String(capitalize(name)+"DLQ"), &awssqs.QueueProps{
		EnforceSSL:      jsii.Bool(true),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(dlqRetentionDays)),
		// A FIFO queue's dead-letter queue must be FIFO too.
		Fifo: fifo,
	})
	var retention awscdk.Duration
	if p.retentionDays != 0 {
		retention = awscdk.Duration_Days(jsii.Number(p.retentionDays))
	}
	queue := awssqs.NewQueue(scope, jsii.String(capitalize(name)+"Queue"), &awssqs.QueueProps{
		RetentionPeriod:           retention,
		EnforceSSL:                jsii.Bool(true),
		Encryption:                awssqs.QueueEncryption_SQS_MANAGED,
		VisibilityTimeout:         p.visibility,
		DeliveryDelay:             p.delay,
		Fifo:                      fifo,
		ContentBasedDeduplication: contentDedup,
		DeduplicationScope:        dedupScope,
		FifoThroughputLimit:       throughput,
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           dlq,
			MaxReceiveCount: jsii.Number(maxReceiveCount),
		},
	})
	return &workQueue{name: name, queue: queue, dlq: dlq, props: p}
}

// deadline is the longest a message of the queue can take from its first delivery to the end
// of its last attempt: a visibility timeout for each of its maxReceiveCount deliveries. The
// scheduler reads the same from the queue's own attributes (the main module's
// queue.Settings.Deadline); work still without an outcome after it is ended or queued again.
func (q *workQueue) deadline() time.Duration {
	return time.Duration(*q.props.visibility.ToSeconds(nil)) * time.Second * maxReceiveCount
}

// envVar is the environment variable carrying the queue's URL to every function
// ("OPENVITALS_AUDIT_QUEUE"), as the main module's service.ConfigFromEnv reads it.
func (q *workQueue) envVar() string {
	return "OPENVITALS_" + strings.ToUpper(q.name) + "_QUEUE"
}

// feed makes the queue invoke fn with batches as p says. Every consumer reports partial batch
// failures, so that one bad message does not send its whole batch back.
func (q *workQueue) feed(fn awslambda.Function, p awslambdaeventsources.SqsEventSourceProps) {
	p.ReportBatchItemFailures = jsii.Bool(true)
	fn.AddEventSource(awslambdaeventsources.NewSqsEventSource(q.queue, &p))
}

// feedOneAtATime makes the queue invoke fn with one message at a time (a failure is retried
// alone), at most maxConcurrency at once.
func (q *workQueue) feedOneAtATime(fn awslambda.Function, maxConcurrency float64) {
	q.feed(fn, awslambdaeventsources.SqsEventSourceProps{BatchSize: jsii.Number(1), MaxConcurrency: jsii.Number(maxConcurrency)})
}

// sharedEnvironment is what every function gets: the generated names of the table and the
// buckets, and every queue's URL. The main module's service.FromEnv opens every queue at start
// (a URL costs no call), whether or not the function may use it: a URL grants nothing.
func sharedEnvironment(d *data, queues []*workQueue) map[string]*string {
	env := map[string]*string{
		"OPENVITALS_TABLE":         d.table.TableName(),
		"OPENVITALS_BUCKET":        d.bucket.BucketName(),
		"OPENVITALS_RUM_BUCKET":    d.rumBucket.BucketName(),
		"OPENVITALS_EXPORT_BUCKET": d.exports.bucket.BucketName(),
	}
	for _, q := range queues {
		env[q.envVar()] = q.queue.QueueUrl()
	}
	return env
}
