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
const PurgeMaxReceiveCount = 3

// PurgeVisibilityTimeoutMinutes is how long a received purge message stays hidden;
// it must exceed the purge worker's Lambda timeout, or SQS redelivers a
// message that is still being processed.
const PurgeVisibilityTimeoutMinutes = 5

// AuditMaxReceiveCount is how many times an audit may fail (DNS failure, timeout, HTTP error,
// Lighthouse runtimeError) before SQS moves its message to the audit dead-letter queue.
const AuditMaxReceiveCount = 3

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
const MultistepMaxReceiveCount = 3

// MultistepWorkerTimeoutMinutes is the multistep worker's Lambda timeout: a run is stopped
// after 3 minutes, which leaves time to start Chromium and record the outcome and screenshot.
const MultistepWorkerTimeoutMinutes = 5

// MultistepVisibilityTimeoutMinutes is how long a received multistep message stays hidden:
// six times the worker's timeout, as for the audit queue.
const MultistepVisibilityTimeoutMinutes = 6 * MultistepWorkerTimeoutMinutes

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
}

// NewStorage creates the table, the bucket, and the purge, audit and multistep queues with
// their dead-letter queues under scope. Physical names are left to CloudFormation so
// several copies of the stack can live in one account.
func NewStorage(scope constructs.Construct, id string) *Storage {
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
	})

	dlq := awssqs.NewQueue(c, jsii.String("PurgeDLQ"), &awssqs.QueueProps{
		EnforceSSL: jsii.Bool(true),
		Encryption: awssqs.QueueEncryption_SQS_MANAGED,
		// The longest SQS allows: time to look into a failed purge and redrive it.
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})

	purge := awssqs.NewQueue(c, jsii.String("purge"), &awssqs.QueueProps{
		EnforceSSL:        jsii.Bool(true),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(PurgeVisibilityTimeoutMinutes)),
		// Purges are idempotent, so retrying is safe; a message that keeps
		// failing is parked in the DLQ instead of looping forever.
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           dlq,
			MaxReceiveCount: jsii.Number(PurgeMaxReceiveCount),
		},
	})

	auditDLQ := awssqs.NewQueue(c, jsii.String("AuditDLQ"), &awssqs.QueueProps{
		EnforceSSL:      jsii.Bool(true),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})

	audit := awssqs.NewQueue(c, jsii.String("audit"), &awssqs.QueueProps{
		EnforceSSL:        jsii.Bool(true),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(AuditVisibilityTimeoutMinutes)),
		// A page that cannot be audited is retried, then parked; its last error is
		// already on the page (the worker records it on every failure).
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           auditDLQ,
			MaxReceiveCount: jsii.Number(AuditMaxReceiveCount),
		},
	})

	multistepDLQ := awssqs.NewQueue(c, jsii.String("MultistepDLQ"), &awssqs.QueueProps{
		EnforceSSL:      jsii.Bool(true),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})

	multistep := awssqs.NewQueue(c, jsii.String("multistep"), &awssqs.QueueProps{
		EnforceSSL:        jsii.Bool(true),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(MultistepVisibilityTimeoutMinutes)),
		// A run whose message keeps failing is parked rather than replayed forever.
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           multistepDLQ,
			MaxReceiveCount: jsii.Number(MultistepMaxReceiveCount),
		},
	})

	return &Storage{
		Construct: c, Table: table, Bucket: bucket,
		PurgeQueue: purge, PurgeDLQ: dlq,
		AuditQueue: audit, AuditDLQ: auditDLQ,
		MultistepQueue: multistep, MultistepDLQ: multistepDLQ,
	}
}
