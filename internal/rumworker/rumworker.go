// Package rumworker consumes the two RUM queues: the rebatcher takes the beacon queue in large
// batches and regroups the page views per website onto the RUM FIFO queue; the aggregator
// consumes that queue and folds the views into each website's rollups (the rollup engine).
package rumworker

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/service"
)

// NewRebatcher builds the rebatcher from the service: it sends to the RUM FIFO queue.
func NewRebatcher(_ context.Context, svc *service.Service) (*Rebatcher, error) {
	return NewRebatcherWith(svc.Queues.RUM, svc.Log), nil
}

// NewAggregator builds the aggregator from the service; it places client addresses with the
// embedded IP table.
func NewAggregator(_ context.Context, svc *service.Service) (*Aggregator, error) {
	return NewAggregatorWith(svc.Store, quota.NewKeeper(svc.Store, time.Now), svc.Log, geo.Country), nil
}
