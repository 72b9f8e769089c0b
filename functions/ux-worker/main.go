// Command ux-worker is the Lambda function that consumes the user-experience queue: for each
// website it collects the day's Chrome UX Report records of every page and device, and the
// website's search analytics (Search Console API) when it has the integration.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/uxworkerfn"
)

func main() {
	lambda.Start(service.Handler("ux-worker", uxworkerfn.Handler))
}
