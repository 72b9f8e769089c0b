package auditworker

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Steps is the time an audit spent in each of its steps, summed over its runs: where the time
// outside Lighthouse's own goes (a browser's launch, decoding the report, the diagnostics,
// storing), which is what an audit costs beyond its loads. The log's "audit finished" carries
// it; a benchmark reads it with WithSteps.
type Steps struct {
	mu    sync.Mutex
	order []string
	took  map[string]time.Duration
}

type stepsKey struct{}

// WithSteps returns ctx carrying a fresh Steps that the audits run with ctx add to.
func WithSteps(ctx context.Context) (context.Context, *Steps) {
	s := &Steps{took: map[string]time.Duration{}}
	return context.WithValue(ctx, stepsKey{}, s), s
}

// stepsOf is ctx's Steps, nil when it carries none (adding to nil does nothing).
func stepsOf(ctx context.Context) *Steps {
	s, _ := ctx.Value(stepsKey{}).(*Steps)
	return s
}

// since adds the time since start to step.
func (s *Steps) since(step string, start time.Time) { s.add(step, time.Since(start)) }

// add adds d to step.
func (s *Steps) add(step string, d time.Duration) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.took[step]; !ok {
		s.order = append(s.order, step)
	}
	s.took[step] += d
}

// Took is the time spent in each step, by name.
func (s *Steps) Took() map[string]time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]time.Duration, len(s.took))
	for k, v := range s.took {
		out[k] = v
	}
	return out
}

// LogValue is the steps in milliseconds, in the order they first ran.
func (s *Steps) LogValue() slog.Value {
	if s == nil {
		return slog.GroupValue()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	attrs := make([]slog.Attr, len(s.order))
	for i, name := range s.order {
		attrs[i] = slog.Int64(name, s.took[name].Milliseconds())
	}
	return slog.GroupValue(attrs...)
}
