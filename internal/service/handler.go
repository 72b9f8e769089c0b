package service

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/events"
)

// Handler returns the Lambda handler of the function of functions/<name>, for its main to
// start (lambda.Start): it builds the service from the environment (FromEnv) and the handler
// from the service with build. A failure to build either ends the process, so that Lambda
// reports the start as failed, with the error.
func Handler(name string, build func(ctx context.Context, svc *Service) (any, error)) any {
	ctx := context.Background()
	svc, err := FromEnv(ctx, name)
	if err != nil {
		log.Fatal(err)
	}
	h, err := build(ctx, svc)
	if err != nil {
		log.Fatal(err)
	}
	return h
}

// SQSWorker is a worker an SQS event source invokes with batches of its queue's messages.
type SQSWorker interface {
	HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)
}

// WorkerHandler returns the Lambda handler of the worker build makes from the service, the
// function of functions/<name> (see Handler).
func WorkerHandler[W SQSWorker](name string, build func(ctx context.Context, svc *Service) (W, error)) any {
	return Handler(name, func(ctx context.Context, svc *Service) (any, error) {
		w, err := build(ctx, svc)
		if err != nil {
			return nil, err
		}
		return w.HandleSQS, nil
	})
}
