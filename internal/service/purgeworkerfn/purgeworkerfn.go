// Package purgeworkerfn builds the purge worker from the service: the wiring the purge-worker
// function and the local service share, in a package of its own so that only they link it.
package purgeworkerfn

import (
	"context"

	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/purgeworker"
	"github.com/openvitals/openvitals/internal/service"
)

// New builds the worker over the service's table, buckets and purge queue, with the
// deployment's settle time and retention bounds.
func New(_ context.Context, svc *service.Service) (*purgeworker.Worker, error) {
	w := purgeworker.NewWorker(svc.Store, svc.Objects, svc.RUM, purge.NewQueue(svc.Queues.Purge), svc.Config.PurgeSettle, svc.Log)
	return w.WithExports(svc.Exports, svc.Config.RetentionBounds()), nil
}

// Handler is the purge worker's Lambda handler, for service.Handler: the worker's method value.
func Handler(ctx context.Context, svc *service.Service) (any, error) {
	w, err := New(ctx, svc)
	return w.HandleSQS, err
}
