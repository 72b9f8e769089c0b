// Command lab is the Lambda function serving the lab results (pages with metrics, timelines,
// network, opportunities) and audits on demand behind API Gateway (HTTP API, payload 2.0).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/service/apifn"
)

func main() {
	lambda.Start(apifn.Handler(api.Lab))
}
