// Command notifier is the Lambda function that consumes the notification queue and delivers
// events to the websites' channels: signed webhooks, Slack and email.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/notifyworker"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	ctx := context.Background()
	svc, err := service.FromEnv(ctx, "notifier")
	if err != nil {
		log.Fatal(err)
	}
	worker, err := notifyworker.New(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(worker.HandleSQS)
}
