// Package fanoutworkerfn builds the fan-out worker from the service: the wiring the
// fanout-worker function and the local service share, in a package of its own so that only
// they link the worker (and the Parquet exporter it drives).
package fanoutworkerfn

import (
	"context"

	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/fanoutworker"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/service"
)

// New builds the worker over the service's table, queues and buckets.
func New(_ context.Context, svc *service.Service) (*fanoutworker.Worker, error) {
	q := svc.Queues
	queues := fanoutworker.Queues{Fanout: q.Fanout, Audit: q.Audit, Multistep: q.Multistep, UX: q.UX, Notify: q.Notify, Purge: q.Purge}
	exports := export.New(svc.Store, svc.Objects, rum.NewSegmentReader(svc.RUM, svc.Store), svc.Exports)
	return fanoutworker.New(svc.Store, queues, exports, svc.Log), nil
}

// Handler is the fan-out worker's Lambda handler, for service.Handler: the worker's method value.
func Handler(ctx context.Context, svc *service.Service) (any, error) {
	w, err := New(ctx, svc)
	return w.HandleSQS, err
}
