// Command lab is the Lambda function serving the lab results (pages with metrics, timelines,
// network, opportunities) and audits on demand behind API Gateway (HTTP API, payload 2.0).
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/api"
)

func main() {
	handler, err := api.LambdaHandler(context.Background(), api.Lab)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(handler)
}
