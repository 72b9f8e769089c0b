// Package rumworker consumes the two RUM queues: the rebatcher takes the beacon queue in large
// batches and regroups the page views per website onto the RUM FIFO queue; the aggregator
// consumes that queue and folds the views into each website's rollups.
package rumworker

import (
	"context"

	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/service"
)

// NewRebatcher builds the rebatcher from the service: it sends to the RUM FIFO queue.
func NewRebatcher(_ context.Context, svc *service.Service) (*rum.Rebatcher, error) {
	return rum.NewRebatcher(svc.Queues.RUM, svc.Log), nil
}

// NewAggregator builds the aggregator from the service; it places client addresses with the
// embedded IP table.
func NewAggregator(_ context.Context, svc *service.Service) (*rum.Aggregator, error) {
	return rum.NewAggregator(svc.Store, svc.Log, geo.Country), nil
}
