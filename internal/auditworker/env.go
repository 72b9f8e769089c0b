package auditworker

import (
	"fmt"
	"os"
	"strconv"

	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/lighthouse"
	"github.com/openvitals/openvitals/internal/service"
)

// FromEnv builds the audit worker of a service from the environment: OPENVITALS_AUDIT_RUNS
// (default 3), OPENVITALS_TARGET_SCHEME (default https), OPENVITALS_ALLOW_PRIVATE_TARGETS, the
// Chromium binary (OPENVITALS_CHROMIUM_BIN or Debian's) and the Lighthouse runner under
// moduleRoot (OPENVITALS_NODE and OPENVITALS_LIGHTHOUSE_RUNNER override its paths). The runner
// is returned so that its owner can close it.
func FromEnv(svc *service.Service, moduleRoot string) (*Worker, *lighthouse.Runner, error) {
	runs := 3
	if v := os.Getenv("OPENVITALS_AUDIT_RUNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 9 {
			return nil, nil, fmt.Errorf("OPENVITALS_AUDIT_RUNS=%q: want 1 to 9", v)
		}
		runs = n
	}
	scheme, err := service.TargetScheme()
	if err != nil {
		return nil, nil, err
	}
	bin, err := browser.LookBin()
	if err != nil {
		return nil, nil, err
	}
	rc := lighthouse.DefaultRunnerConfig(moduleRoot)
	rc.Log = svc.Log
	runner := lighthouse.NewRunner(rc)
	w := NewWorker(WorkerConfig{
		Runs: runs, Scheme: scheme,
		Browser: browser.Options{Bin: bin, Guard: browser.GuardFromEnv(), Log: svc.Log},
	}, svc.Store, svc.Objects, runner, svc.Log)
	return w, runner, nil
}
