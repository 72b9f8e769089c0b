// Package rumworkerfn builds the RUM workers from the service: the wiring the rum-batcher and
// rum-aggregator functions and the local service share, in a package of its own so that only
// they link the workers.
package rumworkerfn

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/rumworker"
	"github.com/openvitals/openvitals/internal/service"
)

// Rebatcher builds the rebatcher: it appends to the websites' logs, places client addresses
// with the embedded IP table, and sends to the RUM FIFO queue.
func Rebatcher(_ context.Context, svc *service.Service) (*rumworker.Rebatcher, error) {
	return rumworker.NewRebatcherWith(svc.RUM, svc.Store, svc.Queues.RUM, geo.Country, svc.Log), nil
}

// RebatcherHandler is the rebatcher's Lambda handler, for service.Handler: the worker's method value.
func RebatcherHandler(ctx context.Context, svc *service.Service) (any, error) {
	w, err := Rebatcher(ctx, svc)
	return w.HandleSQS, err
}

// Aggregator builds the aggregator over the websites' logs and day objects.
func Aggregator(_ context.Context, svc *service.Service) (*rumworker.Aggregator, error) {
	return rumworker.NewAggregatorWith(svc.Store, svc.RUM, quota.NewKeeper(svc.Store, time.Now), svc.Log, geo.Country), nil
}

// AggregatorHandler is the aggregator's Lambda handler, for service.Handler: the worker's method value.
func AggregatorHandler(ctx context.Context, svc *service.Service) (any, error) {
	w, err := Aggregator(ctx, svc)
	return w.HandleSQS, err
}
