// Package notifyworkerfn builds the notifier from the service: the wiring the notifier
// function and the local service share, in a package of its own so that only they link the
// SES and Slack clients.
package notifyworkerfn

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/deliver"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/notifyworker"
	"github.com/openvitals/openvitals/internal/service"
)

// New builds the notifier: it sends email through SES from the configured address, reaches
// only the targets the SSRF guard allows, and links to the API and the dashboard.
func New(_ context.Context, svc *service.Service) (*notifyworker.Worker, error) {
	guard := browser.Guard{AllowPrivate: svc.Config.AllowPrivateTargets}
	sender := deliver.NewSender(guard, sesv2.NewFromConfig(svc.AWS), svc.Config.EmailFrom, svc.Config.APIURL, svc.Config.DashboardURL)
	return notifyworker.NewWorker(svc.Store, svc.Credentials, sender, notify.NewQueue(svc.Queues.Notify), svc.Log), nil
}

// Handler is the notifier's Lambda handler, for service.Handler: the worker's method value.
func Handler(ctx context.Context, svc *service.Service) (any, error) {
	w, err := New(ctx, svc)
	return w.HandleSQS, err
}
