// Command rum-aggregator is the Lambda function that consumes the RUM FIFO queue and folds page
// views into the daily rollups.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	svc, err := service.FromEnv(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(rum.NewAggregator(svc.Store, svc.Log, geo.Country).HandleSQS)
}
