// Command rum-aggregator is the Lambda function that consumes the RUM FIFO queue and folds the
// page views of each website into its rollups of running totals per page and per country.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/rumworkerfn"
)

func main() {
	lambda.Start(service.Handler("rum-aggregator", rumworkerfn.AggregatorHandler))
}
