// Command multistep-worker is the container Lambda function that consumes the multistep queue:
// it plays each run's journey in headless Chromium and records its outcome and measurements.
// It shares the audit worker's image (layers/browser), which sets OPENVITALS_CHROMIUM_BIN.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/browserworkersfn"
)

func main() {
	lambda.Start(service.Handler("multistep-worker", browserworkersfn.MultistepHandler))
}
