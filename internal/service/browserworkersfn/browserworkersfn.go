// Package browserworkersfn builds the workers that drive Chromium, the audit and multistep
// workers, from the service: the wiring their functions (audit-worker, multistep-worker, which
// share the browser image, layers/browser) and the local service share, in a package of its
// own so that only they link the browser and Lighthouse.
package browserworkersfn

import (
	"context"
	"os"

	"github.com/openvitals/openvitals/internal/artifact"
	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/event"
	"github.com/openvitals/openvitals/internal/journey"
	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/multistepworker"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/regression"
	"github.com/openvitals/openvitals/internal/service"
)

// AuditWorker builds the audit worker from the service's configuration (runs per audit, target
// scheme), the browser (browserOptions) and the warm Lighthouse runner: OPENVITALS_NODE and
// OPENVITALS_LIGHTHOUSE_RUNNER, by default the browser layer under the working directory (the
// repository, locally; the image sets both). Close stops the runner.
func AuditWorker(_ context.Context, svc *service.Service) (*auditworker.Worker, error) {
	opts, err := browserOptions(svc)
	if err != nil {
		return nil, err
	}
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	rc := lighthouse.DefaultRunnerConfig(root)
	rc.Log = svc.Log
	events, regressions := outcomes(svc)
	return auditworker.NewWorker(auditworker.WorkerConfig{
		Runs: svc.Config.AuditRuns, Scheme: svc.Config.TargetScheme, Browser: opts,
		Events: events, Regressions: regressions, Secrets: svc.Credentials,
	}, svc.Store, svc.Objects, lighthouse.NewRunner(rc), svc.Log), nil
}

// AuditHandler is the audit worker's Lambda handler, for service.Handler: the worker's method value.
func AuditHandler(ctx context.Context, svc *service.Service) (any, error) {
	w, err := AuditWorker(ctx, svc)
	return w.HandleSQS, err
}

// MultistepWorker builds the multistep worker from the service's configuration (target scheme)
// and the browser (browserOptions).
func MultistepWorker(_ context.Context, svc *service.Service) (*multistepworker.Worker, error) {
	opts, err := browserOptions(svc)
	if err != nil {
		return nil, err
	}
	events, regressions := outcomes(svc)
	return multistepworker.NewWorker(multistepworker.WorkerConfig{
		Scheme: svc.Config.TargetScheme, Events: events, Regressions: regressions,
		Journey: journey.Options{Browser: opts},
	}, svc.Store, svc.Objects, svc.Log), nil
}

// MultistepHandler is the multistep worker's Lambda handler, for service.Handler: the worker's method value.
func MultistepHandler(ctx context.Context, svc *service.Service) (any, error) {
	w, err := MultistepWorker(ctx, svc)
	return w.HandleSQS, err
}

// browserOptions are the browser both workers start: the Chromium binary LookBin finds
// (OPENVITALS_CHROMIUM_BIN or Debian's), its connections guarded as the configuration says
// (OPENVITALS_ALLOW_PRIVATE_TARGETS), logging to the service's log.
func browserOptions(svc *service.Service) (browser.Options, error) {
	bin, err := browser.LookBin()
	if err != nil {
		return browser.Options{}, err
	}
	return browser.Options{Bin: bin, Guard: browser.Guard{AllowPrivate: svc.Config.AllowPrivateTargets}, Log: svc.Log}, nil
}

// outcomes are where both workers report what changed: the recorder of events, which queues
// them to the notifier, and the regression watcher over the reports, which records through it.
func outcomes(svc *service.Service) (*event.Recorder, *regression.Watcher) {
	events := event.NewRecorder(svc.Store, notify.NewQueue(svc.Queues.Notify), svc.Log)
	return events, regression.NewWatcher(svc.Store, artifact.New(svc.Objects), events, svc.Log)
}
