// Package audit runs the daily lab audits: the scheduler queues one message per page and
// device, and the worker audits each with Lighthouse in headless Chromium and stores the result.
package audit

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// Devices are the devices every page is audited on.
var Devices = []string{"desktop", "mobile"}

// Job is one audit: a page of a website on one device. It is the body of an audit message.
type Job struct {
	Account string `json:"account"`
	Website string `json:"website"`
	Page    string `json:"page"`
	Device  string `json:"device"`
	// Queued is when the job was queued; Day the UTC day the scheduler queued it for (empty for
	// audits asked for on demand).
	Queued time.Time `json:"queued"`
	Day    string    `json:"day,omitempty"`
}

// Scheduler queues audits.
type Scheduler struct {
	store *store.Store
	queue *queue.Queue
	log   *slog.Logger
}

// NewScheduler returns a Scheduler sending to the audit queue q.
func NewScheduler(st *store.Store, q *queue.Queue, log *slog.Logger) *Scheduler {
	return &Scheduler{store: st, queue: q, log: log}
}

// Daily queues the day's audit of every page of every website on both devices, skipping those
// already queued for the same UTC day, so that running it twice a day audits nothing twice.
// It returns how many audits it queued.
func (s *Scheduler) Daily(ctx context.Context, now time.Time) ([]Job, error) {
	day := store.Day(now)
	sites, err := s.store.AllWebsites(ctx)
	if err != nil {
		return nil, err
	}
	var queued []Job
	for _, ref := range sites {
		w, err := s.store.Website(ctx, ref.Account, ref.Website)
		if store.IsNotFound(err) {
			continue // deleted since the listing
		}
		if err != nil {
			return queued, err
		}
		pages, err := s.store.Pages(ctx, w)
		if err != nil {
			return queued, err
		}
		var jobs []Job
		for _, p := range pages {
			for _, d := range Devices {
				fresh, err := s.store.MarkQueued(ctx, ref, p.ID, d, day)
				if err != nil {
					return queued, err
				}
				if fresh {
					jobs = append(jobs, Job{Account: w.Account, Website: w.ID, Page: p.ID, Device: d, Queued: now, Day: day})
				}
			}
		}
		n, err := s.send(ctx, jobs)
		queued = append(queued, jobs[:n]...)
		if err != nil {
			// Forget the marks of what was not sent, so that a rerun queues them.
			for _, j := range jobs[n:] {
				_ = s.store.UnmarkQueued(ctx, ref, j.Page, j.Device, day)
			}
			return queued, err
		}
	}
	s.log.InfoContext(ctx, "daily audits queued", "day", day, "websites", len(sites), "audits", len(queued))
	return queued, nil
}

// Website queues audits of a website's pages now, whatever the schedule: the given pages (all
// when empty) on the given devices (both when empty). It returns how many it queued.
func (s *Scheduler) Website(ctx context.Context, w store.Website, pages []store.Page, devices []string) (int, error) {
	if len(devices) == 0 {
		devices = Devices
	}
	now := time.Now().UTC()
	var jobs []Job
	for _, p := range pages {
		for _, d := range devices {
			jobs = append(jobs, Job{Account: w.Account, Website: w.ID, Page: p.ID, Device: d, Queued: now})
		}
	}
	return s.send(ctx, jobs)
}

func (s *Scheduler) send(ctx context.Context, jobs []Job) (int, error) {
	values := make([]any, len(jobs))
	for i, j := range jobs {
		values[i] = j
	}
	n, err := s.queue.SendBatch(ctx, values)
	if err != nil {
		return n, fmt.Errorf("queue audits: %w", err)
	}
	return n, nil
}

// DailyResult is what a scheduler run did.
type DailyResult struct {
	Day    string `json:"day"`
	Queued int    `json:"queued"`
	Jobs   []Job  `json:"jobs,omitempty"`
}

// HandleEvent is the scheduler's Lambda handler, invoked by the daily EventBridge rule (and by
// `make daily` and the local service's clock). The day is the event's time, in UTC.
func (s *Scheduler) HandleEvent(ctx context.Context, ev events.CloudWatchEvent) (DailyResult, error) {
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	jobs, err := s.Daily(ctx, at)
	return DailyResult{Day: store.Day(at), Queued: len(jobs), Jobs: jobs}, err
}
