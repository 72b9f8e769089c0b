// Package apifn builds the API server from the service: the wiring the API's functions
// (functions/<group>) and the local service share. Like each worker's, it is a package of its
// own, so that only the programs that serve the API link it.
package apifn

import (
	"context"

	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/openvitals/openvitals/internal/api"
	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/ux"
)

// New builds the server from the service's configuration and clients: the pipelines' queues,
// the report bucket, the credentials keyring.
func New(svc *service.Service) *api.Server {
	return api.New(api.Deps{
		Store:              svc.Store,
		Purger:             purge.NewQueue(svc.Queues.Purge),
		Auditor:            audit.NewQueue(svc.Store, svc.Queues.Audit, svc.Log),
		Runner:             multistep.NewQueue(svc.Store, svc.Queues.Multistep, svc.Log),
		Reports:            svc.Objects,
		Credentials:        svc.Credentials,
		Notifications:      notify.NewQueue(svc.Queues.Notify),
		FieldHistory:       ux.NewQueue(svc.Queues.UX),
		Log:                svc.Log,
		AllowLocalTargets:  svc.Config.AllowPrivateTargets,
		Beacons:            rum.NewCollector(svc.Queues.Beacon),
		Field:              rum.NewReader(svc.RUM),
		RUM:                svc.RUM,
		TrustViewerCountry: svc.Config.TrustViewerCountry,
		RUMURL:             svc.Config.RUMURL,
		Exports:            export.New(svc.Store, svc.Objects, rum.NewSegmentReader(svc.RUM, svc.Store), svc.Exports),
		Retention:          svc.Config.RetentionBounds(),
	})
}

// Handler returns the Lambda handler of one endpoint group's function behind API Gateway
// (HTTP API, payload format 2.0): the group's function is functions/<group.Name>.
func Handler(group api.Group) any {
	return service.Handler(group.Name, func(_ context.Context, svc *service.Service) (any, error) {
		return httpadapter.NewV2(New(svc).Serve(group)).ProxyWithContext, nil
	})
}
