// Command field is the Lambda function serving the field-data (real-user) reports behind API
// Gateway (HTTP API, payload format 2.0).
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/openvitals/openvitals/internal/service"
)

func main() {
	svc, err := service.FromEnv(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(httpadapter.NewV2(svc.API.Field()).ProxyWithContext)
}
