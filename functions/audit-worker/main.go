// Command audit-worker is the container Lambda function that consumes the audit queue: it runs
// Lighthouse in headless Chromium on each page and stores the results. The container image
// (layers/browser) holds Chromium, Node 22, Lighthouse and html-validate, and sets
// OPENVITALS_NODE, OPENVITALS_LIGHTHOUSE_RUNNER and OPENVITALS_CHROMIUM_BIN.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	ctx := context.Background()
	svc, err := service.FromEnv(ctx, "audit-worker")
	if err != nil {
		log.Fatal(err)
	}
	worker, err := auditworker.New(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(worker.HandleSQS)
}
