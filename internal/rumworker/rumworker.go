// Package rumworker consumes the two RUM queues: the rebatcher takes the beacon queue in large
// batches and appends each website's page views to its log, asking the aggregator to fold it;
// the aggregator compacts each website's log into its day objects (the rollup engine's tables,
// internal/rumstore).
package rumworker

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/quota"
	"github.com/openvitals/openvitals/internal/rum/geo"
	"github.com/openvitals/openvitals/internal/service"
)

// NewRebatcher builds the rebatcher from the service: it appends to the websites' logs, places
// client addresses with the embedded IP table, and sends to the RUM FIFO queue.
func NewRebatcher(_ context.Context, svc *service.Service) (*Rebatcher, error) {
	return NewRebatcherWith(svc.RUM, svc.Store, svc.Queues.RUM, geo.Country, svc.Log), nil
}

// NewAggregator builds the aggregator from the service.
func NewAggregator(_ context.Context, svc *service.Service) (*Aggregator, error) {
	return NewAggregatorWith(svc.Store, svc.RUM, quota.NewKeeper(svc.Store, time.Now), svc.Log, geo.Country), nil
}
