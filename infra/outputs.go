package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// addOutputs adds the stack's outputs, which let operators and `make` targets find the
// generated names without hard-coding any of them: the API's URL, the data's and every
// queue's names, and the commands that finish a deployment (the first admin key, the CrUX
// key).
func addOutputs(stack awscdk.Stack, s *shared, a *api, queues []*workQueue) {
	apiURL := a.url
	output := func(id string, value *string, description string) {
		awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(description)})
	}
	output("ApiUrl", apiURL, "Base URL of the openvitals REST API")
	output("DashboardUrl", awscdk.Fn_Join(jsii.String(""), &[]*string{apiURL, jsii.String("app")}), "The web dashboard: open it and paste an API key")
	output("TableName", s.data.table.TableName(), "DynamoDB table holding every openvitals entity")
	output("CreateAdminKey", awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("AWS_REGION="), stack.Region(), jsii.String(" OPENVITALS_TABLE="), s.data.table.TableName(),
		jsii.String(" go run ./cmd/keys create -account ACCOUNT -role admin"),
	}), "Create the first admin API key: run this from the repository with AWS credentials that may write the table, ACCOUNT replaced by your account name; it prints the key once")
	output("RumUrl", a.rumURL, "The RUM entry (a Lambda function URL): websites embed <script async src=\"{RumUrl}rum/{website-id}.js\"></script>, whose beacons go to {RumUrl}collect")
	output("BucketName", s.data.bucket.BucketName(), "S3 bucket for raw audit reports and screenshots")
	output("RumBucketName", s.data.rumBucket.BucketName(), "S3 bucket for real-user data: each website's day objects and large log entries")
	output("ExportBucketName", s.data.exports.bucket.BucketName(), "S3 bucket of the daily Parquet exports (exports/<dataset>/day=/website=/part.parquet) and Athena's query results")
	output("AthenaWorkgroup", s.data.exports.workgroup.Ref(), "Athena workgroup for the exports: SELECT ... FROM openvitals.lab_runs WHERE day >= '2026-01-01'")
	output("CruxApiKeySecretArn", s.cruxKey.SecretArn(), "Secret for the Chrome UX Report API key, blank until you set it; the ux worker skips CrUX until then")
	output("SetCruxApiKey", awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("aws secretsmanager put-secret-value --region "), stack.Region(),
		jsii.String(" --secret-id "), s.cruxKey.SecretArn(), jsii.String(" --secret-string YOUR_CRUX_API_KEY"),
	}), "Store the CrUX API key (a Google Cloud API key with the Chrome UX Report API enabled)")
	output("AlarmTopicArn", s.alarmTopic.TopicArn(), "SNS topic the queue alarms notify: subscribe to it (or deploy with -c alarmEmail=...)")
	// <Name>QueueUrl and <Name>DLQUrl: "AuditQueueUrl", "AuditDLQUrl".
	for _, q := range queues {
		output(capitalize(q.name)+"QueueUrl", q.queue.QueueUrl(), q.props.description)
		output(capitalize(q.name)+"DLQUrl", q.dlq.QueueUrl(), q.props.dlqDescription)
	}
}
