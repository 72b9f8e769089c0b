// Package audit queues the lab audits: its messages (one page on one device each), the daily
// schedule of every page on both devices, audits on demand, and how far queued audits have come.
// The auditworker package consumes the audit queue, with the lighthouse engine beneath.
package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/openvitals/openvitals/internal/model"
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
	// Series and Test name the test series and its test the audit is for (empty otherwise).
	Series string `json:"series,omitempty"`
	Test   string `json:"test,omitempty"`
	// Experiment names the experiment the audits are for (empty otherwise).
	Experiment string `json:"experiment,omitempty"`
}

// Check tells whether a message names everything an audit needs.
func (j Job) Check() error {
	if j.Account == "" || j.Website == "" || j.Page == "" || j.Device == "" {
		return errors.New("an audit needs account, website, page and device")
	}
	return nil
}

// Queue queues audits.
type Queue struct {
	store *store.Store
	queue *queue.Queue
	log   *slog.Logger
}

// NewQueue returns a Queue sending to the audit queue q.
func NewQueue(st *store.Store, q *queue.Queue, log *slog.Logger) *Queue {
	return &Queue{store: st, queue: q, log: log}
}

// Daily queues the day's audit of every page of every website on both devices, skipping those
// already queued for the same UTC day, so that running it twice a day audits nothing twice.
// It returns the audits it queued.
func (s *Queue) Daily(ctx context.Context, now time.Time) ([]Job, error) {
	day := model.Day(now)
	sites, err := s.store.AllWebsites(ctx)
	if err != nil {
		return nil, err
	}
	var queued []Job
	for _, ref := range sites {
		w, err := s.store.Website(ctx, ref.Account, ref.Website)
		if model.IsNotFound(err) {
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
				jobs = append(jobs, Job{Account: w.Account, Website: w.ID, Page: p.ID, Device: d, Queued: now, Day: day})
			}
		}
		sent, err := queue.SendOnce(ctx, jobs,
			func(ctx context.Context, j Job) (bool, error) {
				return s.store.MarkQueued(ctx, ref, j.Page, j.Device, day)
			},
			func(ctx context.Context, j Job) error { return s.store.UnmarkQueued(ctx, ref, j.Page, j.Device, day) },
			s.send)
		queued = append(queued, sent...)
		if err != nil {
			return queued, fmt.Errorf("audits: %w", err)
		}
	}
	s.log.InfoContext(ctx, "daily audits queued", "day", day, "websites", len(sites), "audits", len(queued))
	return queued, nil
}

// Website queues audits of a website's pages now, whatever the schedule: the given pages (all
// when empty) on the given devices (both when empty). It returns how many it queued.
func (s *Queue) Website(ctx context.Context, w model.Website, pages []model.Page, devices []string) (int, error) {
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

// Experiment stores an experiment, queued, and queues its audits (one message: the control's
// and the changed audit run one after the other).
func (s *Queue) Experiment(ctx context.Context, w model.Website, e *model.Experiment) error {
	e.Status = model.RunQueued
	if err := s.store.CreateExperiment(ctx, w, e); err != nil {
		return err
	}
	_, err := s.send(ctx, []Job{{Account: w.Account, Website: w.ID, Page: e.Page, Device: e.Device, Queued: e.Created, Experiment: e.ID}})
	return err
}

func (s *Queue) send(ctx context.Context, jobs []Job) (int, error) {
	n, err := queue.SendJSON[Job](s.queue)(ctx, jobs)
	if err != nil {
		return n, fmt.Errorf("queue audits: %w", err)
	}
	return n, nil
}
