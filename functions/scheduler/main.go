// Command scheduler is the Lambda function the daily EventBridge rules invoke: it queues the
// day's lab audits, multistep runs and user-experience data collections (those the event names)
// and queues again the purges whose message was lost.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/schedule"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	svc, err := service.FromEnv(context.Background(), "scheduler")
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(schedule.New(svc).Handle)
}
