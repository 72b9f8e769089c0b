// Command scheduler is the Lambda function the daily EventBridge rule invokes: it queues one
// audit per page and device, and queues again purges whose message was lost.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	svc, err := service.FromEnv(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(svc.Daily)
}
