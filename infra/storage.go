package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// TTLAttribute is the item attribute DynamoDB reads to expire items (epoch seconds).
const TTLAttribute = "expires"

// PurgeMaxReceiveCount is how many times the purge worker may fail a message
// before SQS moves it to the dead-letter queue.
const PurgeMaxReceiveCount = MaxReceiveCount

// PurgeVisibilityTimeoutMinutes is how long a received purge message stays hidden;
// it must exceed the purge worker's Lambda timeout, or SQS redelivers a
// message that is still being processed.
const PurgeVisibilityTimeoutMinutes = 5

// AuditMaxReceiveCount is how many times an audit may fail (DNS failure, timeout, HTTP error,
// Lighthouse runtimeError) before SQS moves its message to the audit dead-letter queue.
const AuditMaxReceiveCount = MaxReceiveCount

// AuditWorkerTimeoutMinutes is the audit worker's Lambda timeout: the longest Lambda allows.
// Three Lighthouse runs, Navigation Timing and html-validate take about a minute, a slow page
// several.
const AuditWorkerTimeoutMinutes = 15

// AuditVisibilityTimeoutMinutes is how long a received audit message stays hidden: six times
// the audit worker's timeout, as AWS advises for SQS event sources, so that the event source's
// own retries (after throttling, say) finish before SQS hands the message out again.
const AuditVisibilityTimeoutMinutes = 6 * AuditWorkerTimeoutMinutes

// MultistepMaxReceiveCount is how many times a multistep run's message may fail (the worker
// could not record the run, or timed out) before SQS moves it to the multistep dead-letter
// queue. A journey that fails a step is a completed message: the run records the failure.
const MultistepMaxReceiveCount = MaxReceiveCount

// MultistepWorkerTimeoutMinutes is the multistep worker's Lambda timeout: a run is stopped
// after 3 minutes, which leaves time to start Chromium and record the outcome and screenshot.
const MultistepWorkerTimeoutMinutes = 5

// MultistepVisibilityTimeoutMinutes is how long a received multistep message stays hidden:
// six times the worker's timeout, as for the audit queue.
const MultistepVisibilityTimeoutMinutes = 6 * MultistepWorkerTimeoutMinutes

// RUMAggregatorTimeoutSeconds is the RUM aggregator's Lambda timeout: a batch of 10 beacons
// folds into a few rollup items (read, merge the sketches, conditional write), retried on a
// concurrent write.
const RUMAggregatorTimeoutSeconds = 60

// RUMBatcherTimeoutSeconds is the RUM rebatcher's Lambda timeout: it regroups up to
// RUMBatcherBatchSize small messages and sends them on in a few requests.
const RUMBatcherTimeoutSeconds = 60

// RUMBatcherVisibilityTimeoutSeconds is six times the rebatcher's timeout, as AWS advises,
// plus its batching window.
const RUMBatcherVisibilityTimeoutSeconds = 6*RUMBatcherTimeoutSeconds + RUMBatcherWindowSeconds

// RUMBatcherBatchSize and RUMBatcherWindowSeconds: the rebatcher's event source hands over up
// to this many beacons, waiting up to this long to gather them, so that a fold covers many
// views of a website instead of one.
const (
	RUMBatcherBatchSize     = 2000
	RUMBatcherWindowSeconds = 30
)

// RUMVisibilityTimeoutSeconds is six times the aggregator's timeout, as AWS advises.
const RUMVisibilityTimeoutSeconds = 6 * RUMAggregatorTimeoutSeconds

// FieldCollectorTimeoutMinutes is the field collector's Lambda timeout: one website a message,
// each page on both devices at most 150 CrUX queries a minute (500 pages take ~7 minutes), plus
// the Search Console query.
const FieldCollectorTimeoutMinutes = 15

// FieldVisibilityTimeoutMinutes is six times the collector's timeout. With one collector at a
// time (reserved concurrency 1), the event source holds a few messages while it waits for the
// collector and retries the throttled ones; each must stay hidden that long, or SQS counts a
// new receive and a website would reach the dead-letter queue without ever failing.
const FieldVisibilityTimeoutMinutes = 6 * FieldCollectorTimeoutMinutes

// MaxReceiveCount is how many times any message may be received (and fail) before SQS moves
// it to its queue's dead-letter queue.
const MaxReceiveCount = 3

// DLQRetentionDays is how long a dead-letter queue keeps a message: the longest SQS allows,
// time to look into a failure and redrive it.
const DLQRetentionDays = 14

// Storage holds the stateful resources every function shares. Functions are
// granted access to these fields one by one (least privilege), so keep the
// concrete types here rather than names or ARNs.
type Storage struct {
	constructs.Construct

	// Table is the single DynamoDB table (PK/SK) holding every entity.
	Table awsdynamodb.Table
	// Bucket holds raw Lighthouse reports and screenshots, too big for DynamoDB.
	Bucket awss3.Bucket
	// PurgeQueue carries website and page deletions to the purge worker.
	PurgeQueue awssqs.Queue
	// PurgeDLQ receives purge messages that failed PurgeMaxReceiveCount times.
	PurgeDLQ awssqs.Queue
	// AuditQueue carries one message per page and device to audit, to the audit worker.
	AuditQueue awssqs.Queue
	// AuditDLQ receives audit messages that failed AuditMaxReceiveCount times.
	AuditDLQ awssqs.Queue
	// MultistepQueue carries one message per multistep run, to the multistep worker.
	MultistepQueue awssqs.Queue
	// MultistepDLQ receives multistep messages that failed MultistepMaxReceiveCount times.
	MultistepDLQ awssqs.Queue
	// BeaconQueue carries beacons from the collect endpoint (one message per invocation) to
	// the RUM rebatcher, which takes it in large batches.
	BeaconQueue awssqs.Queue
	// BeaconDLQ receives beacon messages that failed MaxReceiveCount times.
	BeaconDLQ awssqs.Queue
	// RUMQueue carries regrouped beacons from the rebatcher to the RUM aggregator. It is a
	// FIFO queue: each message carries a MessageDeduplicationId, so a batch sent twice within
	// five minutes is queued once, and its MessageGroupId is the website.
	RUMQueue awssqs.Queue
	// RUMDLQ (FIFO too) receives beacon batches that failed MaxReceiveCount times.
	RUMDLQ awssqs.Queue
	// FieldQueue carries one message per website and day to the field collector.
	FieldQueue awssqs.Queue
	// FieldDLQ receives field messages that failed MaxReceiveCount times.
	FieldDLQ awssqs.Queue
}

// WorkQueue is a queue with its dead-letter queue, as the alarms see them.
type WorkQueue struct {
	// Name says what the queue carries, for alarm descriptions ("audit").
	Name string
	// Queue and DLQ are the queue and its dead-letter queue.
	Queue, DLQ awssqs.Queue
}

// WorkQueues lists every queue with its dead-letter queue.
func (s *Storage) WorkQueues() []WorkQueue {
	return []WorkQueue{
		{"purge", s.PurgeQueue, s.PurgeDLQ},
		{"audit", s.AuditQueue, s.AuditDLQ},
		{"multistep", s.MultistepQueue, s.MultistepDLQ},
		{"beacon", s.BeaconQueue, s.BeaconDLQ},
		{"rum", s.RUMQueue, s.RUMDLQ},
		{"field", s.FieldQueue, s.FieldDLQ},
	}
}

// StorageProps configures NewStorage.
type StorageProps struct {
	// ReportRetentionDays is how long the bucket keeps an object.
	ReportRetentionDays int
}

// NewStorage creates the table, the bucket, and the purge, audit, multistep, RUM and field
// queues with their dead-letter queues under scope. Physical names are left to CloudFormation
// so several copies of the stack can live in one account.
func NewStorage(scope constructs.Construct, id string, p StorageProps) *Storage {
	c := constructs.NewConstruct(scope, jsii.String(id))

	table := awsdynamodb.NewTable(c, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("PK"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String("SK"), Type: awsdynamodb.AttributeType_STRING},
		// Traffic is spiky (a daily audit burst, RUM beacons): no capacity to plan.
		BillingMode: awsdynamodb.BillingMode_PAY_PER_REQUEST,
		// Customer history cannot be recomputed: allow restoring to any second of the last 35 days.
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		TimeToLiveAttribute: jsii.String(TTLAttribute),
		// Deleting the stack must never delete customer data.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})

	bucket := awss3.NewBucket(c, jsii.String("Bucket"), &awss3.BucketProps{
		// Reports are served through the API only, never straight from S3.
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		// Every object is a report or a failure screenshot, under
		// {account}/{website}/pages|tests/..., so no prefix singles reports out: the rule
		// covers the bucket. The API reads only the reports of the last 30 days.
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("ExpireOldReports"),
			Expiration:                          awscdk.Duration_Days(jsii.Number(float64(p.ReportRetentionDays))),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
	})

	purge, purgeDLQ := newWorkQueue(c, "purge", "PurgeDLQ", queueProps{
		// Purges are idempotent, so retrying is safe; a message that keeps
		// failing is parked in the DLQ instead of looping forever.
		visibility: awscdk.Duration_Minutes(jsii.Number(PurgeVisibilityTimeoutMinutes)),
	})
	// A page that cannot be audited is retried, then parked; its last error is already on the
	// page (the worker records it on every failure).
	audit, auditDLQ := newWorkQueue(c, "audit", "AuditDLQ", queueProps{
		visibility: awscdk.Duration_Minutes(jsii.Number(AuditVisibilityTimeoutMinutes)),
	})
	// A run whose message keeps failing is parked rather than replayed forever.
	multistep, multistepDLQ := newWorkQueue(c, "multistep", "MultistepDLQ", queueProps{
		visibility: awscdk.Duration_Minutes(jsii.Number(MultistepVisibilityTimeoutMinutes)),
	})
	beacon, beaconDLQ := newWorkQueue(c, "beacon", "BeaconDLQ", queueProps{
		visibility: awscdk.Duration_Seconds(jsii.Number(RUMBatcherVisibilityTimeoutSeconds)),
	})
	rum, rumDLQ := newWorkQueue(c, "rum", "RumDLQ", queueProps{
		visibility: awscdk.Duration_Seconds(jsii.Number(RUMVisibilityTimeoutSeconds)),
		fifo:       true,
	})
	field, fieldDLQ := newWorkQueue(c, "field", "FieldDLQ", queueProps{
		visibility: awscdk.Duration_Minutes(jsii.Number(FieldVisibilityTimeoutMinutes)),
	})

	return &Storage{
		Construct: c, Table: table, Bucket: bucket,
		PurgeQueue: purge, PurgeDLQ: purgeDLQ,
		AuditQueue: audit, AuditDLQ: auditDLQ,
		MultistepQueue: multistep, MultistepDLQ: multistepDLQ,
		BeaconQueue: beacon, BeaconDLQ: beaconDLQ,
		RUMQueue: rum, RUMDLQ: rumDLQ,
		FieldQueue: field, FieldDLQ: fieldDLQ,
	}
}

// queueProps are what differ between the work queues.
type queueProps struct {
	// visibility must be at least six times the consumer's timeout.
	visibility awscdk.Duration
	fifo       bool
}

// newWorkQueue creates a queue and its dead-letter queue (construct ids id and dlqID), both
// encrypted and refusing plain HTTP; a message received MaxReceiveCount times moves to the DLQ.
func newWorkQueue(scope constructs.Construct, id, dlqID string, p queueProps) (queue, dlq awssqs.Queue) {
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
	dlq = awssqs.NewQueue(scope, jsii.String(dlqID), &awssqs.QueueProps{
		EnforceSSL:      jsii.Bool(true),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(DLQRetentionDays)),
		// A FIFO queue's dead-letter queue must be FIFO too.
		Fifo: fifo,
	})
	queue = awssqs.NewQueue(scope, jsii.String(id), &awssqs.QueueProps{
		EnforceSSL:                jsii.Bool(true),
		Encryption:                awssqs.QueueEncryption_SQS_MANAGED,
		VisibilityTimeout:         p.visibility,
		Fifo:                      fifo,
		ContentBasedDeduplication: contentDedup,
		DeduplicationScope:        dedupScope,
		FifoThroughputLimit:       throughput,
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           dlq,
			MaxReceiveCount: jsii.Number(MaxReceiveCount),
		},
	})
	return queue, dlq
}
