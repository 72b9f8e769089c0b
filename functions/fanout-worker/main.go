// Command fanout-worker is the Lambda function that consumes the fan-out queue: it walks the
// websites listing a page at a time, and queues each website's share of a daily job (its
// audits, a shard of pages at a time; its multistep runs; its user-experience data
// collection), each part once a day.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/fanoutworker"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	svc, err := service.FromEnv(context.Background(), "fanout-worker")
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(fanoutworker.New(svc).HandleSQS)
}
