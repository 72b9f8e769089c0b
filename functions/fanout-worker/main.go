// Command fanout-worker is the Lambda function that consumes the fan-out queue: it walks the
// websites listing a page at a time, and queues each website's share of a daily job (its
// audits, a shard of pages at a time; its multistep runs; its user-experience data
// collection), each part once a day.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/fanoutworkerfn"
)

func main() {
	lambda.Start(service.Handler("fanout-worker", fanoutworkerfn.Handler))
}
