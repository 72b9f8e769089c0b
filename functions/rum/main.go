// Command rum is the Lambda function serving the public real-user monitoring endpoints behind
// API Gateway (HTTP API, payload format 2.0): the snippet GET /rum/{website-id}.js and the
// beacon endpoint POST /collect.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/service/apifn"
)

func main() {
	lambda.Start(apifn.Handler(api.RUM))
}
