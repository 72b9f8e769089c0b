// Command field-collector is the Lambda function that consumes the field queue: for each
// website it collects the day's user-experience dataset records (CrUX API) of every page and
// device, and the website's search analytics (Search Console API) when it has the integration.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/fieldcollect"
	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	ctx := context.Background()
	svc, err := service.FromEnv(ctx)
	if err != nil {
		log.Fatal(err)
	}
	collector, err := fieldcollect.FromEnv(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(collector.HandleSQS)
}
