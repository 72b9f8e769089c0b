package google

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/googleapi"
)

// pacer spaces queries evenly so that no minute holds more than the quota: with 150 a minute,
// one query starts at most every 400 ms. Spacing rather than a burst-then-wait budget keeps
// the client under the limit over any 60-second window, wherever it starts.
type pacer struct {
	interval time.Duration
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error
	mu       sync.Mutex
	next     time.Time
}

// wait returns when the next query may start.
func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	now := p.now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.interval)
	p.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		return p.sleep(ctx, d)
	}
	return nil
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff between attempts of a query the API refused for now: Retry-After when the API sends
// it, otherwise 1 s doubling per attempt, never more than maxBackoff.
const (
	firstBackoff = time.Second
	maxBackoff   = time.Minute
)

// retry runs call until it succeeds, fails for good, or has failed attempts times; before
// each attempt it waits for pace (nil: no pacing), and between attempts it backs off.
func (c *Client) retry(ctx context.Context, pace *pacer, what string, call func(context.Context) error) error {
	var err error
	for attempt := 1; attempt <= c.attempts; attempt++ {
		if pace != nil {
			if err := pace.wait(ctx); err != nil {
				return err
			}
		}
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		err = call(callCtx)
		cancel()
		if err == nil || !retryable(ctx, err) || attempt == c.attempts {
			break
		}
		d := backoff(attempt, err)
		c.log.InfoContext(ctx, "query refused for now; retrying", "query", what, "attempt", attempt, "wait", d.String(), "err", err)
		if err := c.sleep(ctx, d); err != nil {
			return err
		}
	}
	return err
}

// callTimeout bounds one request, so that a stalled connection costs an attempt, not the run.
const callTimeout = 30 * time.Second

// retryable tells whether an error may go away: the API's 429 and 5xx answers, and failures
// of the connection. Anything the caller's own context ended is not.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if code, ok := statusOf(err); ok {
		return code == http.StatusTooManyRequests || code >= 500
	}
	return true
}

// statusOf is the HTTP status an API (or its token endpoint) answered with, if any.
func statusOf(err error) (int, bool) {
	var g *googleapi.Error
	if errors.As(err, &g) {
		return g.Code, true
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		return re.Response.StatusCode, true
	}
	return 0, false
}

// backoff is how long to wait after a failed attempt (counted from 1).
func backoff(attempt int, err error) time.Duration {
	var g *googleapi.Error
	if errors.As(err, &g) {
		if s, perr := strconv.Atoi(g.Header.Get("Retry-After")); perr == nil && s >= 0 {
			return min(time.Duration(s)*time.Second, maxBackoff)
		}
	}
	return min(firstBackoff<<(attempt-1), maxBackoff)
}
