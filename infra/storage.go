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
}

// NewStorage creates the table, the bucket and the purge queue with its
// dead-letter queue under scope. Physical names are left to CloudFormation so
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

	return &Storage{Construct: c, Table: table, Bucket: bucket, PurgeQueue: purge, PurgeDLQ: dlq}
}
