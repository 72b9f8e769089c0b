// Command events is the Lambda function serving the events and channels endpoints behind API Gateway (HTTP API,
// payload format 2.0).
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/api"
)

func main() {
	handler, err := api.LambdaHandler(context.Background(), api.Events)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(handler)
}
