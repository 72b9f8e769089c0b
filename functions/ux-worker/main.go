// Command ux-worker is the Lambda function that consumes the user-experience queue: for each
// website it collects the day's Chrome UX Report records of every page and device, and the
// website's search analytics (Search Console API) when it has the integration.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/uxworker"
)

func main() {
	ctx := context.Background()
	svc, err := service.FromEnv(ctx, "ux-worker")
	if err != nil {
		log.Fatal(err)
	}
	worker, err := uxworker.New(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(worker.HandleSQS)
}
