// Command web is the Lambda function serving the dashboard's files under /app/ (internal/web)
// behind API Gateway (HTTP API, payload 2.0).
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/api"
)

func main() {
	handler, err := api.LambdaHandler(context.Background(), api.Web)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(handler)
}
