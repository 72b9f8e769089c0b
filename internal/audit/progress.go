package audit

import (
	"context"
	"time"

	"github.com/openvitals/openvitals/internal/store"
)

// Progress counts how far queued audits have come. Retrying audits failed and wait for SQS
// to deliver them again; Failed ones failed their last attempt.
type Progress struct {
	Done, Failed, Retrying, Remaining int
}

// MaxAttempts is how many times SQS delivers an audit before it goes to the dead-letter queue;
// it matches the audit queue's redrive policy.
const MaxAttempts = 3

// Track reports the progress of jobs from what the worker stored: an audit is done when a
// result newer than its queuing exists, failed when its last error is newer and came from the
// final attempt, retrying when that error came from an earlier attempt, and remaining
// otherwise. A job whose page was deleted counts as done.
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
		day := store.Day(time.Now())
		results, err := st.LabResults(ctx, w, j.Page, j.Device, store.Day(j.Queued), day)
		if err != nil {
			return p, err
		}
		if len(results) > 0 && !results[len(results)-1].Audited.Before(j.Queued) {
			p.Done++
			continue
		}
		last, err := st.LastLabError(ctx, w, j.Page, j.Device)
		switch {
		case err == nil && !last.At.Before(j.Queued) && last.Attempts >= MaxAttempts:
			p.Failed++
		case err == nil && !last.At.Before(j.Queued):
			p.Retrying++
		case err == nil || store.IsNotFound(err):
			p.Remaining++
		default:
			return p, err
		}
	}
	return p, nil
}
