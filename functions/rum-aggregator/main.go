// Command rum-aggregator is the Lambda function that consumes the RUM FIFO queue and folds the
// page views of each website into its rollups of running totals per page and per country.
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
	svc, err := service.FromEnv(ctx, "rum-aggregator")
	if err != nil {
		log.Fatal(err)
	}
	worker, err := rumworker.NewAggregator(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(worker.HandleSQS)
}
