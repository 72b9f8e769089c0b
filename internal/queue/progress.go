package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
)

// Progress counts how far queued jobs have come: Done ones have a result, Skipped ones finished
// with nothing to show for a reason their consumer recorded (no API key, say), Failed ones
// failed their last attempt, Retrying ones failed an earlier attempt and wait for SQS to deliver
// them again, Remaining ones have not been tried yet.
type Progress struct {
	Done, Skipped, Failed, Retrying, Remaining int
}

// Attempted is what a consumer recorded of a job queued at a time: when it last finished
// and when it last failed, at which attempt (zero times when it did not), and whether that
// failure was final (permanent: no delivery follows, whatever the attempt).
type Attempted struct {
	Queued, Finished, Failed time.Time
	Attempt                  int
	Final                    bool
}

// Add counts one job by what its consumer recorded, maxAttempts being the queue's maximum
// receives: done once it finished after it was queued; failed when its last error is newer and
// was final or came from the final attempt; retrying when that error came from an earlier
// attempt.
func (p *Progress) Add(a Attempted, maxAttempts int) {
	switch {
	case !a.Finished.IsZero() && !a.Finished.Before(a.Queued):
		p.Done++
	case !a.Failed.IsZero() && !a.Failed.Before(a.Queued) && (a.Final || a.Attempt >= maxAttempts):
		p.Failed++
	case !a.Failed.IsZero() && !a.Failed.Before(a.Queued):
		p.Retrying++
	default:
		p.Remaining++
	}
}

// Swept is what a sweep of overdue work did: the pieces it queued again, those it ended failed,
// and the markers it dropped of work that had ended or gone meanwhile.
type Swept struct {
	Requeued int `json:"requeued"`
	Failed   int `json:"failed"`
	Dropped  int `json:"dropped"`
}

// Add adds another sweep's counts.
func (s *Swept) Add(o Swept) {
	s.Requeued += o.Requeued
	s.Failed += o.Failed
	s.Dropped += o.Dropped
}

// SendOnce sends the jobs that mark accepts (the first mark of a job for its day; false for
// one marked already) and returns those it sent. When sending fails, the marks of the jobs not
// sent are forgotten, so that running it again sends them: a daily job runs at most once a day
// however often its schedule fires, and a failure loses nothing.
func SendOnce[J any](ctx context.Context, jobs []J,
	mark func(context.Context, J) (bool, error), unmark func(context.Context, J) error,
	send func(context.Context, []J) (int, error)) ([]J, error) {
	var fresh []J
	for _, j := range jobs {
		ok, err := mark(ctx, j)
		if err != nil {
			return nil, err
		}
		if ok {
			fresh = append(fresh, j)
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	n, err := send(ctx, fresh)
	if err != nil {
		for _, j := range fresh[n:] {
			_ = unmark(context.WithoutCancel(ctx), j)
		}
		return fresh[:n], fmt.Errorf("queue: %w", err)
	}
	return fresh, nil
}

// SweepEach lists the pending pieces of work and sweeps each in turn, sweep counting what it
// does in the Swept returned: one that fails to be swept does not stop the others, and its
// error names it.
func SweepEach[P any](ctx context.Context, list func(context.Context) ([]P, error), name func(P) string, sweep func(P, *Swept) error) (Swept, error) {
	var swept Swept
	pending, err := list(ctx)
	if err != nil {
		return swept, err
	}
	var errs []error
	for _, p := range pending {
		if err := sweep(p, &swept); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name(p), err))
		}
	}
	return swept, errors.Join(errs...)
}

// TrackEach counts how far jobs have come, each one of a website: website reads a job's
// website, track adds the job's progress to p. A job whose website was deleted since counts
// as done.
func TrackEach[J, W any](jobs []J, website func(J) (W, error), track func(j J, w W, p *Progress) error) (Progress, error) {
	var p Progress
	for _, j := range jobs {
		w, err := website(j)
		if model.IsNotFound(err) {
			p.Done++
			continue
		}
		if err == nil {
			err = track(j, w, &p)
		}
		if err != nil {
			return p, err
		}
	}
	return p, nil
}
