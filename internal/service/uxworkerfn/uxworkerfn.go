// Package uxworkerfn builds the ux worker from the service: the wiring the ux-worker function
// and the local service share, in a package of its own so that no other function links
// Google's client libraries.
package uxworkerfn

import (
	"context"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/google"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/uxworker"
)

// New builds the worker with the CrUX API key (Service.CrUXAPIKey, read once here), its share
// of the CrUX quota and the configured endpoint overrides.
func New(ctx context.Context, svc *service.Service) (*uxworker.Worker, error) {
	key, err := svc.CrUXAPIKey(ctx)
	if err != nil {
		return nil, err
	}
	events := event.NewRecorder(svc.Store, notify.NewQueue(svc.Queues.Notify), svc.Log)
	return uxworker.New(ctx, uxworker.Deps{
		Google: google.Config{
			CrUXKey:               key,
			QueriesPerMinute:      svc.Config.CrUXQueriesPerMinute,
			CrUXEndpoint:          svc.Config.CrUXEndpoint,
			SearchConsoleEndpoint: svc.Config.SearchConsoleEndpoint,
		},
		Store:       svc.Store,
		Credentials: svc.Credentials,
		Events:      events,
		Regressions: regression.NewWatcher(svc.Store, artifact.New(svc.Objects), events, svc.Log),
		RUM:         rum.NewReader(svc.RUM),
		Log:         svc.Log,
	})
}

// Handler is the user-experience worker's Lambda handler, for service.Handler: the worker's method value.
func Handler(ctx context.Context, svc *service.Service) (any, error) {
	w, err := New(ctx, svc)
	return w.HandleSQS, err
}
