// Package purge queues the removal of everything a deleted website, page, multistep test or
// experiment left behind: its items in the table and its objects in the bucket. Deletions
// answer at once and queue a purge; the purgeworker package consumes the queue, and Sweep
// queues again the purges whose message was lost.
//
// A worker that was already auditing or running when the deletion came may still store a
// report or a screenshot afterwards, for as long as it can run. So a purge passes again until
// its settle time (the longest any worker runs, and a margin) has passed since the deletion,
// and only its last pass removes the purge's marker.
package purge

import (
	"context"
	"errors"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Job is the body of a purge message: the purge marker the deletion stored, as is.
type Job model.PurgeJob

// Check tells whether a message names what to purge.
func (j Job) Check() error {
	if j.Account == "" || j.Website == "" {
		return errors.New("a purge needs account and website")
	}
	n := 0
	for _, id := range []string{j.Page, j.Test, j.Experiment} {
		if id != "" {
			n++
		}
	}
	if n > 1 {
		return errors.New("a purge names at most one of a page, a test and an experiment")
	}
	if j.Retention && n > 0 {
		return errors.New("a retention pass is a whole website's")
	}
	return nil
}

// Queue queues purge jobs.
type Queue struct{ q queue.Of[Job] }

// NewQueue returns a Queue sending to q.
func NewQueue(q *queue.Queue) *Queue { return &Queue{q: queue.Typed[Job](q)} }

// Enqueue queues one purge job.
func (q *Queue) Enqueue(ctx context.Context, job model.PurgeJob) error {
	return q.q.Send(ctx, Job(job))
}

// EnqueueNextPass queues a job's next pass, due when settle has passed since the deletion (or
// sooner: SQS delays a message by at most 15 minutes). It reports false, queuing nothing, when
// that time has come: the pass just made was the last.
func (q *Queue) EnqueueNextPass(ctx context.Context, job model.PurgeJob, settle time.Duration, now time.Time) (bool, error) {
	wait := job.Requested.Add(settle).Sub(now)
	if wait <= 0 {
		return false, nil
	}
	return true, q.q.SendAfter(ctx, Job(job), min(wait, queue.MaxDelay))
}

// Sweep queues again every pending purge requested more than grace ago: its message was lost,
// or its worker stopped half-way. Callers add the settle time to grace, as a purge's marker
// stays until then on purpose. It returns how many it queued.
func Sweep(ctx context.Context, st *store.Store, q *Queue, grace time.Duration) (int, error) {
	jobs, err := st.PendingPurges(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, job := range jobs {
		if time.Since(job.Requested) < grace {
			continue
		}
		if err := q.Enqueue(ctx, job); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
