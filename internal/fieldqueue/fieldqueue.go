// Package fieldqueue queues the daily collection of field data (the user-experience dataset and
// search analytics): one message per website and UTC day on the field queue. The fieldcollect
// package consumes them. This package stays free of Google's client libraries, so that the
// scheduler and the API functions, which import it through the service, do not link them.
package fieldqueue

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// MaxAttempts is how many times SQS delivers a collection before its dead-letter queue; it
// matches the field queue's redrive policy.
const MaxAttempts = 3

// Job is one website's collection of one UTC day: the body of a field message.
type Job struct {
	Account string    `json:"account"`
	Website string    `json:"website"`
	Day     string    `json:"day"`
	Queued  time.Time `json:"queued"`
}

// Scheduler queues collections.
type Scheduler struct {
	store *store.Store
	queue *queue.Queue
	log   *slog.Logger
}

// NewScheduler returns a Scheduler sending to the field queue q.
func NewScheduler(st *store.Store, q *queue.Queue, log *slog.Logger) *Scheduler {
	return &Scheduler{store: st, queue: q, log: log}
}

// Daily queues the day's collection of every website once per UTC day: running it twice the
// same day queues nothing the second time. It returns the jobs it queued.
func (s *Scheduler) Daily(ctx context.Context, now time.Time) ([]Job, error) {
	day := store.Day(now)
	sites, err := s.store.AllWebsites(ctx)
	if err != nil {
		return nil, err
	}
	var jobs []Job
	for _, ref := range sites {
		fresh, err := s.store.MarkFieldQueued(ctx, ref, day)
		if err != nil {
			return nil, err
		}
		if fresh {
			jobs = append(jobs, Job{Account: ref.Account, Website: ref.Website, Day: day, Queued: now.UTC()})
		}
	}
	values := make([]any, len(jobs))
	for i, j := range jobs {
		values[i] = j
	}
	n, err := s.queue.SendBatch(ctx, values)
	if err != nil {
		// Forget the marks of what was not sent, so that a rerun queues them.
		for _, j := range jobs[n:] {
			_ = s.store.UnmarkFieldQueued(context.WithoutCancel(ctx), store.SiteRef{Account: j.Account, Website: j.Website}, day)
		}
		return jobs[:n], fmt.Errorf("queue field collections: %w", err)
	}
	s.log.InfoContext(ctx, "daily field collections queued", "day", day, "websites", len(sites), "queued", n)
	return jobs, nil
}

// Progress counts how far queued collections have come, as audit.Progress does for audits.
type Progress struct {
	Done, Failed, Retrying, Remaining int
}

// Track reports the progress of jobs from the runs the collector recorded: done once a run of
// the job's day finished, failed when its last attempt failed, retrying when an earlier one
// did. A collection of a website deleted since counts as done.
func Track(ctx context.Context, st *store.Store, jobs []Job) (Progress, error) {
	var p Progress
	for _, j := range jobs {
		w, err := st.Website(ctx, j.Account, j.Website)
		if store.IsNotFound(err) {
			p.Done++
			continue
		}
		if err != nil {
			return p, err
		}
		run, err := st.FieldRun(ctx, w, j.Day)
		switch {
		case store.IsNotFound(err):
			p.Remaining++
		case err != nil:
			return p, err
		case !run.Finished.IsZero():
			p.Done++ // runs are per day, and a day is queued once
		case run.Error != "" && run.Attempt >= MaxAttempts:
			p.Failed++
		case run.Error != "":
			p.Retrying++
		default:
			p.Remaining++
		}
	}
	return p, nil
}
