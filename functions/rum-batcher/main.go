// Command rum-batcher is the Lambda function that takes the beacon queue in large batches and
// regroups the page views per website for the RUM aggregator's FIFO queue.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	ctx := context.Background()
	svc, err := service.FromEnv(ctx, "rum-batcher")
	if err != nil {
		log.Fatal(err)
	}
	worker, err := rumworker.NewRebatcher(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(worker.HandleSQS)
}
