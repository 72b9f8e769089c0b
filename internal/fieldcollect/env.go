package fieldcollect

import (
	"context"
	"os"

	"github.com/openvitals/openvitals/internal/service"
)

// FromEnv builds the collector of a service from the environment: the CrUX API key
// (OPENVITALS_CRUX_API_KEY, or in AWS the Secrets Manager secret OPENVITALS_CRUX_API_KEY_SECRET
// names, read once here) and the endpoint overrides OPENVITALS_CRUX_ENDPOINT and
// OPENVITALS_SEARCH_CONSOLE_ENDPOINT.
func FromEnv(ctx context.Context, svc *service.Service) (*Collector, error) {
	key, err := svc.Secret(ctx, "OPENVITALS_CRUX_API_KEY", "OPENVITALS_CRUX_API_KEY_SECRET")
	if err != nil {
		return nil, err
	}
	return New(ctx, Config{
		CrUXKey:               key,
		CrUXEndpoint:          os.Getenv("OPENVITALS_CRUX_ENDPOINT"),
		SearchConsoleEndpoint: os.Getenv("OPENVITALS_SEARCH_CONSOLE_ENDPOINT"),
	}, svc.Store, svc.Credentials, svc.Log)
}
