// Package multistepworkerfn builds the multistep worker from the service: the wiring the
// multistep-worker function and the local service share, in a package of its own so that only
// they link the browser.
package multistepworkerfn

import (
	"context"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/journey"
	"github.com/openvitals/openvitals/internal/multistepworker"
	"github.com/openvitals/openvitals/internal/service"
)

// New builds the worker from the service's configuration (target scheme, SSRF guard) and the
// Chromium binary (OPENVITALS_CHROMIUM_BIN or Debian's).
func New(_ context.Context, svc *service.Service) (*multistepworker.Worker, error) {
	bin, err := browser.LookBin()
	if err != nil {
		return nil, err
	}
	events, regressions := svc.Outcomes()
	return multistepworker.NewWorker(multistepworker.WorkerConfig{
		Scheme:      svc.Config.TargetScheme,
		Events:      events,
		Regressions: regressions,
		Journey: journey.Options{Browser: browser.Options{
			Bin: bin, Guard: browser.Guard{AllowPrivate: svc.Config.AllowPrivateTargets}, Log: svc.Log,
		}},
	}, svc.Store, svc.Objects, svc.Log), nil
}
