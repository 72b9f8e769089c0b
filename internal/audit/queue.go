// Package audit queues the lab audits: its messages (one page on one device each), a website's
// daily audits of every page on both devices (its share of the daily fan-out: daily.go),
// audits on demand, and how far queued audits have come. The auditworker package consumes the
// audit queue, with the lighthouse engine beneath.
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
	// Shard and Attempt name, for a daily audit, the shard of the website's pages the daily
	// fan-out queued it with, and the attempt that queued it: a message of an attempt that a
	// later one superseded is dropped (see Superseded).
	Shard   string `json:"shard,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
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
	queue queue.Of[Job]
	log   *slog.Logger
	// OverdueSweep ends or queues again the series tests without an outcome (overdue.go): its
	// Overdue those whose deadline passed, its Requeue all of them (the local service's start;
	// a message of an earlier queuing still delivered is not audited, see
	// store.SeriesTest.Queued).
	*queue.OverdueSweep[store.PendingSeriesTest, model.SeriesTest, Job]
	// takeoverDelay is how long the audits of a shard queued again wait (SetTakeoverDelay).
	takeoverDelay time.Duration
}

// NewQueue returns a Queue sending to the audit queue q.
func NewQueue(st *store.Store, q *queue.Queue, log *slog.Logger) *Queue {
	s := &Queue{store: st, queue: queue.Typed[Job](q), log: log, takeoverDelay: queue.MaxDelay}
	s.OverdueSweep = queue.NewOverdueSweep(s.seriesWork())
	return s
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
	n, err := s.queue.SendBatch(ctx, jobs)
	if err != nil {
		return n, fmt.Errorf("queue audits: %w", err)
	}
	return n, nil
}
