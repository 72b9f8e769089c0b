package audit

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Track reports the progress of jobs from what the worker stored: an audit is done when a
// result newer than its queuing exists, failed when its last error is newer and was final (a
// permanent failure, or the last attempt's), retrying when that error came from an earlier
// attempt, and remaining otherwise. A job whose page was deleted counts as done.
func Track(ctx context.Context, st *store.Store, jobs []Job) (queue.Progress, error) {
	return queue.TrackEach(jobs, func(j Job) (model.Website, error) { return st.Website(ctx, j.Account, j.Website) },
		func(j Job, w model.Website, p *queue.Progress) error {
			a := queue.Attempted{Queued: j.Queued}
			results, err := st.LabResults(ctx, w, j.Page, j.Device, model.Day(j.Queued), model.Day(time.Now()))
			if err != nil {
				return err
			}
			if len(results) > 0 {
				a.Finished = results[len(results)-1].Audited
			}
			last, err := st.LastLabError(ctx, w, j.Page, j.Device)
			if err != nil && !model.IsNotFound(err) {
				return err
			}
			a.Failed, a.Attempt, a.Final = last.At, last.Attempts, last.Final
			p.Add(a, queue.MaxReceives)
			return nil
		})
}
