package api

import (
	"context"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/service"
	"github.com/openvitals/openvitals/internal/ux"
)

// FromService builds the server from the service's configuration and clients: the pipelines'
// queues, the report bucket, the credentials keyring.
func FromService(svc *service.Service) *Server {
	return New(Deps{
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

// LambdaHandler is the Lambda handler of one endpoint group's function behind API Gateway
// (HTTP API, payload format 2.0), built from the environment (the group's function is
// functions/<group.Name>).
func LambdaHandler(ctx context.Context, group Group) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), error) {
	svc, err := service.FromEnv(ctx, group.Name)
	if err != nil {
		return nil, err
	}
	return httpadapter.NewV2(FromService(svc).Serve(group)).ProxyWithContext, nil
}
