// Package awsclient builds the AWS clients every program of openvitals shares, from the SDK's
// own environment variables. It is a leaf: internal/service builds the deployment's resources
// over it, and the tests' fixtures (internal/testing/awstest, internal/testing/lambdatest) reach the stand-ins
// with it without depending on the service.
package awsclient

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Clients are the AWS clients, configured from the SDK's own environment variables
// (AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_S3, ...).
type Clients struct {
	DynamoDB *dynamodb.Client
	SQS      *sqs.Client
	S3       *s3.Client
	// SecretsManager reads the secrets of AWS deployments (the CrUX API key, the credentials
	// key); locally the same values come from environment variables.
	SecretsManager *secretsmanager.Client
	// AWS is the loaded configuration, for the clients one function alone uses (the
	// notifier's SES), so that the others neither build nor link them.
	AWS aws.Config
}

// New loads the AWS configuration and builds the clients.
func New(ctx context.Context) (Clients, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return Clients{}, fmt.Errorf("load AWS config: %w", err)
	}
	return Clients{
		DynamoDB: dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
			// DynamoDB Local sends CRC32 headers that do not match some error bodies, which
			// only fills the log with warnings; AWS's own endpoint keeps the check.
			o.DisableValidateResponseChecksum = os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != ""
		}),
		SQS: sqs.NewFromConfig(cfg),
		S3: s3.NewFromConfig(cfg, func(o *s3.Options) {
			// S3 stand-ins (gofakes3, LocalStack) serve buckets by path, not by host name.
			o.UsePathStyle = os.Getenv("AWS_ENDPOINT_URL_S3") != ""
			// Checksums only where S3 requires them: stand-ins reject the newer trailers.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			// Nor validated unless asked: a ranged GET (a report reading a day's tables) has
			// none to validate, and the SDK would log so at every one.
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}),
		SecretsManager: secretsmanager.NewFromConfig(cfg),
		AWS:            cfg,
	}, nil
}
