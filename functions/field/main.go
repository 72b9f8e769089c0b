// Command field is the Lambda function serving the field-data (real-user) reports behind API
// Gateway (HTTP API, payload format 2.0).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/service/apifn"
)

func main() {
	lambda.Start(apifn.Handler(api.Field))
}
