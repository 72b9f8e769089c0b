// Command web is the Lambda function serving the dashboard's files under /app/ (internal/web)
// behind API Gateway (HTTP API, payload 2.0).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/service/apifn"
)

func main() {
	lambda.Start(apifn.Handler(api.Web))
}
