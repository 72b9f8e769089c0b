// Command notifier is the Lambda function that consumes the notification queue and delivers
// events to the websites' channels: signed webhooks, Slack and email.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/notifyworkerfn"
)

func main() {
	lambda.Start(service.Handler("notifier", notifyworkerfn.Handler))
}
