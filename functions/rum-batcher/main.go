// Command rum-batcher is the Lambda function that takes the beacon queue in large batches and
// regroups the page views per website for the RUM aggregator's FIFO queue.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/rumworkerfn"
)

func main() {
	lambda.Start(service.Handler("rum-batcher", rumworkerfn.RebatcherHandler))
}
