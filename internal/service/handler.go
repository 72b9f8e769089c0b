package service

import (
	"context"
	"log"
)

// Handler returns the Lambda handler of the function of functions/<name>, for its main to
// start (lambda.Start): it builds the service from the environment (FromEnv) and the handler
// from the service with build. A failure to build either ends the process, so that Lambda
// reports the start as failed, with the error.
//
// A worker's build returns its method value (w.HandleSQS), never the worker as an interface:
// a type that reaches an interface keeps more of its methods, and of the AWS clients it holds,
// in the binary (a generic builder did that: +832 KiB for the ux worker as deployed, +2.5 MB
// for the notifier where net/rpc is linked, as without lambda.norpc).
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
