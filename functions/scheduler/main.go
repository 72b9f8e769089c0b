// Command scheduler is the Lambda function the daily EventBridge rules invoke: it queues the
// day's lab audits, multistep runs and user-experience data collections (those the event names)
// and queues again the purges whose message was lost.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/schedulefn"
)

func main() {
	lambda.Start(service.Handler("scheduler", func(_ context.Context, svc *service.Service) (any, error) {
		return schedulefn.New(svc).Handle, nil
	}))
}
