// Package auditworkerfn builds the audit worker from the service: the wiring the audit-worker
// function and the local service share, in a package of its own so that only they link the
// browser and Lighthouse.
package auditworkerfn

import (
	"context"
	"os"

	"github.com/openvitals/openvitals/internal/auditworker"
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/service"
)

// New builds the worker from the service's configuration (runs per audit, target scheme,
// SSRF guard), the Chromium binary (OPENVITALS_CHROMIUM_BIN or Debian's) and the warm
// Lighthouse runner: OPENVITALS_NODE and OPENVITALS_LIGHTHOUSE_RUNNER, by default the browser
// layer under the working directory (the repository, locally; the image sets both). Close
// stops the runner.
func New(_ context.Context, svc *service.Service) (*auditworker.Worker, error) {
	bin, err := browser.LookBin()
	if err != nil {
		return nil, err
	}
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	rc := lighthouse.DefaultRunnerConfig(root)
	rc.Log = svc.Log
	events, regressions := svc.Outcomes()
	return auditworker.NewWorker(auditworker.WorkerConfig{
		Runs: svc.Config.AuditRuns, Scheme: svc.Config.TargetScheme,
		Browser:     browser.Options{Bin: bin, Guard: browser.Guard{AllowPrivate: svc.Config.AllowPrivateTargets}, Log: svc.Log},
		Events:      events,
		Regressions: regressions,
		Secrets:     svc.Credentials,
	}, svc.Store, svc.Objects, lighthouse.NewRunner(rc), svc.Log), nil
}
