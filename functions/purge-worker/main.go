// Command purge-worker is the Lambda function that consumes the purge queue and removes every
// item and object a deleted website, page or multistep test left behind.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/purgeworkerfn"
)

func main() {
	lambda.Start(service.Handler("purge-worker", purgeworkerfn.Handler))
}
