// Package ux is the pipeline of user-experience data: the daily collection of each website's
// Chrome UX Report records and search analytics. It owns the pipeline's messages (one per
// website and UTC day on the ux queue) and how they are queued and followed; the uxworker
// package consumes them. This package stays free of Google's client libraries, so that the
// scheduler, which imports it, does not link them.
package ux

import (
	"context"
	"errors"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Job is one website's collection of one UTC day: the body of a ux message.
type Job struct {
	Account string    `json:"account"`
	Website string    `json:"website"`
	Day     string    `json:"day"`
	Queued  time.Time `json:"queued"`
	// Pages, when set, are pages just added: the job fetches their history (and the origin's,
	// when it has none yet) rather than the day's collection, so that a new page shows 40
	// weeks of field data from its first day.
	Pages []string `json:"pages,omitempty"`
}

// Check tells whether a message names the collection to make.
func (j Job) Check() error {
	if j.Account == "" || j.Website == "" || j.Day == "" {
		return errors.New("a collection needs account, website and day")
	}
	return nil
}

// Queue queues collections.
type Queue struct {
	queue queue.Of[Job]
}

// NewQueue returns a Queue sending to the ux queue q.
func NewQueue(q *queue.Queue) *Queue {
	return &Queue{queue: queue.Typed[Job](q)}
}

// DailyWebsite queues a website's collection of a day: its share of the daily fan-out, which
// claims it so that it is queued once a day (a redelivery or a second run find it done). An
// attempt that stopped after sending leaves it to be queued again by the next; the worker
// skips a day it collected already.
func (s *Queue) DailyWebsite(ctx context.Context, ref model.SiteRef, day string, now time.Time) error {
	return s.queue.Send(ctx, Job{Account: ref.Account, Website: ref.Website, Day: day, Queued: now.UTC()})
}

// NewPages queues the fetch of the dataset's history of pages just added (see Job.Pages).
func (s *Queue) NewPages(ctx context.Context, site model.Website, pages []model.Page, now time.Time) error {
	ids := make([]string, len(pages))
	for i, p := range pages {
		ids[i] = p.ID
	}
	return s.queue.Send(ctx, Job{Account: site.Account, Website: site.ID, Day: model.Day(now), Queued: now.UTC(), Pages: ids})
}

// Track reports the progress of jobs from the runs the worker recorded: done once a run of
// the job's day finished, skipped when it finished having stored nothing for a reason it noted
// (no CrUX key and no Search Console, say), failed when its last attempt failed, retrying when
// an earlier one did. A collection of a website deleted since counts as done.
func Track(ctx context.Context, st *store.Store, jobs []Job) (queue.Progress, error) {
	return queue.TrackEach(jobs, func(j Job) (model.Website, error) { return st.Website(ctx, j.Account, j.Website) },
		func(j Job, w model.Website, p *queue.Progress) error {
			run, err := st.UXRun(ctx, w, j.Day)
			switch {
			case model.IsNotFound(err):
				p.Remaining++
			case err != nil:
				return err
			case !run.Finished.IsZero() && Skipped(run):
				p.Skipped++
			case !run.Finished.IsZero():
				p.Done++ // runs are per day, and a day is queued once
			case run.Error != "" && run.Attempt >= queue.MaxReceives:
				p.Failed++
			case run.Error != "":
				p.Retrying++
			default:
				p.Remaining++
			}
			return nil
		})
}

// Outcomes returns what the collections of jobs recorded, for those that have a record.
func Outcomes(ctx context.Context, st *store.Store, jobs []Job) ([]model.UXRun, error) {
	var runs []model.UXRun
	for _, j := range jobs {
		w, err := st.Website(ctx, j.Account, j.Website)
		if model.IsNotFound(err) {
			continue
		}
		if err != nil {
			return runs, err
		}
		run, err := st.UXRun(ctx, w, j.Day)
		if model.IsNotFound(err) {
			continue
		}
		if err != nil {
			return runs, err
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// Skipped tells whether a finished collection stored nothing for a reason it noted: no record
// and no search analytics, and a note such as a missing API key. A collection that asked the
// dataset and found no data for the pages is done, not skipped.
func Skipped(run model.UXRun) bool {
	return run.UXRecords == 0 && run.UXNoData == 0 && run.SearchPages == 0 && run.Error != ""
}
