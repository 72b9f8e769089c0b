package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// ttlAttribute is the item attribute DynamoDB reads to expire items (epoch seconds).
const ttlAttribute = "expires"

// data holds the stateful resources every pipeline shares. Functions are granted access to
// them one by one (least privilege), so keep the concrete types here rather than names or
// ARNs.
type data struct {
	// table is the single DynamoDB table (PK/SK) holding every entity.
	table awsdynamodb.Table
	// bucket holds raw Lighthouse reports and screenshots, too big for DynamoDB.
	bucket awss3.Bucket
	// rumBucket holds real-user data: each website's day objects (internal/rumstore) and the
	// large entries of its log of page views, kept for their own retention.
	rumBucket awss3.Bucket
	// exports is the export bucket with the Glue tables and Athena workgroup over it.
	exports *exports
}

// newData creates the table and the buckets under scope/id, all retained when the stack goes.
// Physical names are left to CloudFormation so that several copies of the stack can live in
// one account. The stack passes the id "Storage": the table's and the bucket's logical ids
// derive from it, and a new logical id would make CloudFormation create an empty table and
// bucket and orphan the old ones.
func newData(scope constructs.Construct, id string, reportRetentionDays, rumRetentionDays int) *data {
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
		TimeToLiveAttribute: jsii.String(ttlAttribute),
		// Deleting the stack must never delete customer data.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})

	// Reports are served through the API only, never straight from S3. Every object is a
	// report or a failure screenshot, under {account}/{website}/pages|tests/..., so no prefix
	// singles reports out: the rule covers the bucket. The API reads only the reports of the
	// last 30 days.
	bucket := newRetainedBucket(c, "Bucket", expiryRule{id: "ExpireOldReports", days: reportRetentionDays})
	// Real-user data: a day's object is rewritten by each compaction of its day (a new
	// generation, the one two back removed), so an object's age is its day's at most; log
	// entries are removed once folded. The rule covers the bucket and matches the aggregator's
	// expiry of the days' pointers (OPENVITALS_RUM_RETENTION_DAYS).
	rumBucket := newRetainedBucket(c, "RumBucket", expiryRule{id: "ExpireOldRealUserData", days: rumRetentionDays})
	return &data{table: table, bucket: bucket, rumBucket: rumBucket}
}

// expiryRule is a bucket's lifecycle rule: the objects under prefix ("": the whole bucket)
// expire after days.
type expiryRule struct {
	id, prefix string
	days       int
}

// newRetainedBucket creates under scope/id a private, encrypted bucket that outlives the
// stack, whose objects expire as rules say (and incomplete uploads after a day).
func newRetainedBucket(scope constructs.Construct, id string, rules ...expiryRule) awss3.Bucket {
	var lifecycle []*awss3.LifecycleRule
	for _, r := range rules {
		rule := &awss3.LifecycleRule{
			Id:                                  jsii.String(r.id),
			Expiration:                          awscdk.Duration_Days(jsii.Number(float64(r.days))),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}
		if r.prefix != "" {
			rule.Prefix = jsii.String(r.prefix)
		}
		lifecycle = append(lifecycle, rule)
	}
	return awss3.NewBucket(scope, jsii.String(id), &awss3.BucketProps{
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		EnforceSSL:        jsii.Bool(true),
		Encryption:        awss3.BucketEncryption_S3_MANAGED,
		RemovalPolicy:     awscdk.RemovalPolicy_RETAIN,
		LifecycleRules:    &lifecycle,
	})
}
