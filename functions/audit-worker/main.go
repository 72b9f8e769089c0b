// Command audit-worker is the container Lambda function that consumes the audit queue: it runs
// Lighthouse in headless Chromium on each page and stores the results. The container image
// (layers/browser) holds Chromium, Node 22, Lighthouse and html-validate, and sets
// OPENVITALS_NODE, OPENVITALS_LIGHTHOUSE_RUNNER and OPENVITALS_CHROMIUM_BIN.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/service/browserworkersfn"
)

func main() {
	lambda.Start(service.Handler("audit-worker", browserworkersfn.AuditHandler))
}
