package service

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
)

// Start runs the function of functions/<name> in Lambda: it builds the service from the
// environment (FromEnv), the function's handler from the service with handler, and hands it to
// the Lambda runtime. A failure to build either ends the process, so that Lambda reports the
// start as failed, with the error.
func Start(name string, handler func(ctx context.Context, svc *Service) (any, error)) {
	ctx := context.Background()
	svc, err := FromEnv(ctx, name)
	if err != nil {
		log.Fatal(err)
	}
	h, err := handler(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	lambda.Start(h)
}

// SQSWorker is a worker an SQS event source invokes with batches of its queue's messages.
type SQSWorker interface {
	HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)
}

// StartWorker runs the worker build makes from the service as the function of
// functions/<name> (see Start).
func StartWorker[W SQSWorker](name string, build func(ctx context.Context, svc *Service) (W, error)) {
	Start(name, func(ctx context.Context, svc *Service) (any, error) {
		w, err := build(ctx, svc)
		if err != nil {
			return nil, err
		}
		return w.HandleSQS, nil
	})
}
