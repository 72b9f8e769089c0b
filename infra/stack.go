package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// OpenvitalsStackProps configures OpenvitalsStack.
type OpenvitalsStackProps struct {
	awscdk.StackProps
}

// NewOpenvitalsStack creates the whole openvitals deployment: for now the
// shared storage (table, bucket, purge queue), with their names as outputs.
func NewOpenvitalsStack(scope constructs.Construct, id string, props *OpenvitalsStackProps) awscdk.Stack {
	var sprops awscdk.StackProps
	if props != nil {
		sprops = props.StackProps
	}
	stack := awscdk.NewStack(scope, &id, &sprops)

	storage := NewStorage(stack, "Storage")

	// Outputs let operators and `make` targets find the generated names
	// without hard-coding any of them.
	awscdk.NewCfnOutput(stack, jsii.String("TableName"), &awscdk.CfnOutputProps{
		Value:       storage.Table.TableName(),
		Description: jsii.String("DynamoDB table holding every openvitals entity"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("BucketName"), &awscdk.CfnOutputProps{
		Value:       storage.Bucket.BucketName(),
		Description: jsii.String("S3 bucket for raw audit reports and screenshots"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("PurgeQueueUrl"), &awscdk.CfnOutputProps{
		Value:       storage.PurgeQueue.QueueUrl(),
		Description: jsii.String("SQS queue feeding the purge worker"),
	})

	return stack
}
