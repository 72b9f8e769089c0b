// Command rum-batcher is the Lambda function that takes the beacon queue in large batches and
// regroups the page views per website for the RUM aggregator's FIFO queue.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	svc, err := service.FromEnv(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(rum.NewRebatcher(svc.RUMQueue, svc.Log).HandleSQS)
}
