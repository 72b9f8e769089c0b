// Command multistep-worker is the container Lambda function that consumes the multistep queue:
// it plays each run's journey in headless Chromium and records its outcome and measurements.
// It shares the audit worker's image (layers/browser), which sets OPENVITALS_CHROMIUM_BIN.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/multistepworker"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	ctx := context.Background()
	svc, err := service.FromEnv(ctx, "multistep-worker")
	if err != nil {
		log.Fatal(err)
	}
	worker, err := multistepworker.New(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(worker.HandleSQS)
}
