// Package multistep is the domain of multistep tests: it queues their runs (recorded as queued
// and sent to SQS on demand, for every test of a website, or daily). The multistepworker package
// plays them, with the journey engine beneath.
package multistep

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Job is the body of a run message: enough to find the run's item directly.
type Job struct {
	Account string    `json:"account"`
	Website string    `json:"website"`
	Test    string    `json:"test"`
	Run     string    `json:"run"`
	Created time.Time `json:"created"`
	// Queued is when the message was queued: at the run's creation, or later when the run
	// was queued again (store.Run.Queued). Messages before it came without.
	Queued time.Time `json:"queued,omitzero"`
}

// Check tells whether a message names the run to play.
func (j Job) Check() error {
	if j.Account == "" || j.Website == "" || j.Test == "" || j.Run == "" {
		return errors.New("a run needs account, website, test and run")
	}
	return nil
}

// Queue records runs and queues them.
type Queue struct {
	store *store.Store
	queue queue.Of[Job]
	log   *slog.Logger
	// OverdueSweep ends or queues again the runs without an outcome (overdue.go): its Overdue
	// those whose deadline passed, its Requeue all of them (the local service's start; a
	// message of an earlier queuing still delivered is not played, see store.Run.Queued).
	*queue.OverdueSweep[store.PendingRun, model.Run, Job]
}

// NewQueue returns a Queue sending to the multistep queue q.
func NewQueue(st *store.Store, q *queue.Queue, log *slog.Logger) *Queue {
	runs := &Queue{store: st, queue: queue.Typed[Job](q), log: log}
	runs.OverdueSweep = queue.NewOverdueSweep(runs.runWork())
	return runs
}

// Run records a queued run of a test and queues it.
func (q *Queue) Run(ctx context.Context, w model.Website, t model.Test) (model.Run, error) {
	runs, err := q.send(ctx, w, []model.Test{t})
	if err != nil {
		return model.Run{}, err
	}
	return runs[0], nil
}

// RunAll records and queues one run of every test of a website, and says how many.
func (q *Queue) RunAll(ctx context.Context, w model.Website) (int, error) {
	tests, err := q.store.Tests(ctx, w)
	if err != nil {
		return 0, err
	}
	runs, err := q.send(ctx, w, tests)
	return len(runs), err
}

// DailyWebsite queues the day's run of every test of a website, each once per UTC day (a
// mark per test and day: a website has a few tests), and returns the runs it queued: the
// website's share of the daily fan-out.
func (q *Queue) DailyWebsite(ctx context.Context, w model.Website, day string) ([]Job, error) {
	ref := model.SiteRef{Account: w.Account, Website: w.ID}
	tests, err := q.store.Tests(ctx, w)
	if err != nil {
		return nil, err
	}
	// A run whose message could not be sent is recorded failed rather than queued again.
	var sent []model.Run
	_, err = queue.SendOnce(ctx, tests,
		func(ctx context.Context, t model.Test) (bool, error) {
			return q.store.MarkTestQueued(ctx, ref, t.ID, day)
		},
		func(context.Context, model.Test) error { return nil },
		func(ctx context.Context, due []model.Test) (int, error) {
			runs, err := q.send(ctx, w, due)
			sent = append(sent, runs...)
			return len(runs), err
		})
	queued := make([]Job, len(sent))
	for i, r := range sent {
		queued[i] = Job{Account: w.Account, Website: w.ID, Test: r.Test, Run: r.ID, Created: r.Created, Queued: r.Created}
	}
	return queued, err
}

// Key names a run of a website within it, as the daily fan-out's claim records it (see
// JobOfKey).
func (j Job) Key() string {
	return j.Test + "/" + j.Run + "/" + j.Created.UTC().Format(time.RFC3339Nano)
}

// JobOfKey is the job of a website's run that Key named.
func JobOfKey(w model.SiteRef, key string) (Job, error) {
	test, rest, ok1 := strings.Cut(key, "/")
	run, created, ok2 := strings.Cut(rest, "/")
	at, err := time.Parse(time.RFC3339Nano, created)
	if !ok1 || !ok2 || err != nil {
		return Job{}, fmt.Errorf("not a run's key: %q", key)
	}
	return Job{Account: w.Account, Website: w.Website, Test: test, Run: run, Created: at, Queued: at}, nil
}

// send records a queued run per test, then sends their messages.
func (q *Queue) send(ctx context.Context, w model.Website, tests []model.Test) ([]model.Run, error) {
	runs := make([]model.Run, 0, len(tests))
	jobs := make([]Job, 0, len(tests))
	for _, t := range tests {
		r, err := q.store.CreateRun(ctx, w, t)
		if err != nil {
			return runs, err
		}
		runs = append(runs, r)
		jobs = append(jobs, Job{Account: w.Account, Website: w.ID, Test: t.ID, Run: r.ID, Created: r.Created, Queued: r.Created})
	}
	n, err := q.queue.SendBatch(ctx, jobs)
	if err != nil {
		// Runs whose message was not sent will never start: record them as failed.
		for _, r := range runs[n:] {
			r.Status, r.Error, r.Finished = model.RunFailed, "could not be queued", time.Now().UTC()
			_ = q.store.UpdateRun(context.WithoutCancel(ctx), w, r)
		}
		return runs[:n], fmt.Errorf("queue runs: %w", err)
	}
	return runs, nil
}

// Track counts how far queued runs have come: completed ones are done, failed ones failed
// (a run that could not be played is retried by SQS and shows queued meanwhile), the others
// remain. A run whose test or website was deleted since counts as done.
func Track(ctx context.Context, st *store.Store, jobs []Job) (queue.Progress, error) {
	return queue.TrackEach(jobs, func(j Job) (model.Website, error) { return st.Website(ctx, j.Account, j.Website) },
		func(j Job, w model.Website, p *queue.Progress) error {
			r, err := st.GetRun(ctx, w, j.Test, j.Created, j.Run)
			switch {
			case model.IsNotFound(err):
				p.Done++
			case err != nil:
				return err
			case r.Status == model.RunCompleted:
				p.Done++
			case r.Status == model.RunFailed:
				p.Failed++
			default:
				p.Remaining++
			}
			return nil
		})
}
