package runworker

import (
	"github.com/openvitals/openvitals/internal/browser"
	"github.com/openvitals/openvitals/internal/journey"
	"github.com/openvitals/openvitals/internal/service"
)

// FromEnv builds the multistep worker of a service from the environment: the Chromium binary,
// the SSRF guard (OPENVITALS_ALLOW_PRIVATE_TARGETS) and OPENVITALS_TARGET_SCHEME.
func FromEnv(svc *service.Service) (*Worker, error) {
	scheme, err := service.TargetScheme()
	if err != nil {
		return nil, err
	}
	bin, err := browser.LookBin()
	if err != nil {
		return nil, err
	}
	return NewWorker(WorkerConfig{
		Scheme:  scheme,
		Journey: journey.Options{Browser: browser.Options{Bin: bin, Guard: browser.GuardFromEnv(), Log: svc.Log}},
	}, svc.Store, svc.Objects, svc.Log), nil
}
