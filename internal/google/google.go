// Package google is the engine beneath the user-experience pipeline: clients of the Chrome UX
// Report API and the Search Console API (Google's official libraries), paced under the CrUX
// quota and retried while the APIs answer 429 or 5xx. Only the ux worker imports it, so that
// no other function links Google's client libraries.
package google

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/chromeuxreport/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

// Config is how the client reaches Google's APIs.
type Config struct {
	// CrUXKey is the CrUX API key; without one the client has no CrUX part (HasCrUX).
	CrUXKey string
	// CrUXEndpoint and SearchConsoleEndpoint replace the APIs' base URLs (tests); empty means
	// Google's.
	CrUXEndpoint          string
	SearchConsoleEndpoint string
	// TokenURL is where service-account keys are exchanged for access tokens; empty means
	// Google's (tests set their own).
	TokenURL string
	// HTTPClient carries the Search Console requests and token exchanges; nil means
	// http.DefaultClient. (The CrUX client is built by Google's library around the API key.)
	HTTPClient *http.Client
	// QueriesPerMinute bounds CrUX queries; 0 means 150, the API's quota.
	QueriesPerMinute int
	// MaxAttempts is how often one query is tried while the API answers 429 or 5xx; 0 means 5.
	MaxAttempts int
	// Now and Sleep are the clock the pacing and backoff use; nil means the real one. Tests
	// pass their own to check waits without waiting.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
}

// Client queries Google's APIs.
type Client struct {
	log            *slog.Logger
	crux           *chromeuxreport.Service // nil without a CrUX key
	pace           *pacer
	searchEndpoint string
	tokenURL       string
	http           *http.Client
	attempts       int
	sleep          func(context.Context, time.Duration) error
}

// New returns a Client. log hears about retries.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*Client, error) {
	c := &Client{log: log, searchEndpoint: cfg.SearchConsoleEndpoint, tokenURL: cfg.TokenURL, http: cfg.HTTPClient,
		attempts: cfg.MaxAttempts, sleep: cfg.Sleep}
	if c.tokenURL == "" {
		c.tokenURL = "https://oauth2.googleapis.com/token"
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if c.attempts <= 0 {
		c.attempts = 5
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	if c.sleep == nil {
		c.sleep = sleepCtx
	}
	qpm := cfg.QueriesPerMinute
	if qpm <= 0 {
		qpm = 150
	}
	c.pace = &pacer{interval: time.Minute / time.Duration(qpm), now: now, sleep: c.sleep}
	if cfg.CrUXKey == "" {
		return c, nil
	}
	opts := []option.ClientOption{option.WithAPIKey(cfg.CrUXKey)}
	if cfg.CrUXEndpoint != "" {
		opts = append(opts, option.WithEndpoint(cfg.CrUXEndpoint))
	}
	var err error
	if c.crux, err = chromeuxreport.NewService(ctx, opts...); err != nil {
		return nil, fmt.Errorf("CrUX client: %w", err)
	}
	return c, nil
}

// HasCrUX tells whether the client has a CrUX API key.
func (c *Client) HasCrUX() bool { return c.crux != nil }

// Permanent tells whether an API's answer will not change by asking again: bad requests,
// refused keys or credentials, missing permissions.
func Permanent(err error) bool {
	code, ok := statusOf(err)
	return ok && code >= 400 && code < 500 && code != 429
}

// Message is an error as a user can act on it: the API's own message when there is one.
func Message(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code, desc := re.ErrorCode, re.ErrorDescription
		if code == "" {
			// The JWT flow leaves the token endpoint's answer unparsed.
			var body struct {
				Error       string `json:"error"`
				Description string `json:"error_description"`
			}
			_ = json.Unmarshal(re.Body, &body)
			code, desc = body.Error, body.Description
		}
		return strings.TrimSuffix("the service account's key was refused: "+code+": "+desc, ": ")
	}
	var g *googleapi.Error
	if errors.As(err, &g) && g.Message != "" {
		return fmt.Sprintf("%d: %s", g.Code, g.Message)
	}
	return err.Error()
}
