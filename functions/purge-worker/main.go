// Command purge-worker is the Lambda function that consumes the purge queue and removes every
// item and object a deleted website, page or multistep test left behind.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/purgeworker"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	ctx := context.Background()
	svc, err := service.FromEnv(ctx, "purge-worker")
	if err != nil {
		log.Fatal(err)
	}
	worker, err := purgeworker.New(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(worker.HandleSQS)
}
