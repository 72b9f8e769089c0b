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
	var p queue.Progress
	for _, j := range jobs {
		w, err := st.Website(ctx, j.Account, j.Website)
		if model.IsNotFound(err) {
			p.Done++
			continue
		}
		if err != nil {
			return p, err
		}
		a := queue.Attempted{Queued: j.Queued}
		results, err := st.LabResults(ctx, w, j.Page, j.Device, model.Day(j.Queued), model.Day(time.Now()))
		if err != nil {
			return p, err
		}
		if len(results) > 0 {
			a.Finished = results[len(results)-1].Audited
		}
		last, err := st.LastLabError(ctx, w, j.Page, j.Device)
		if err != nil && !model.IsNotFound(err) {
			return p, err
		}
		a.Failed, a.Attempt, a.Final = last.At, last.Attempts, last.Final
		p.Add(a, queue.MaxReceives)
	}
	return p, nil
}
