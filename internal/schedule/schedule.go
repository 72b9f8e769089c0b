// Package schedule is the scheduler function's handler: invoked by the daily EventBridge rules
// (and locally by the service's clock and make daily), it starts the daily fan-out of each job
// the event names (one message each: the fan-out workers queue the day's lab audits, with the
// channels' daily digests, multistep runs and user-experience data collections, website by
// website; see package fanout) and queues again the purges whose message was lost. Invoked by
// the sweep rule (locally by the service's sweep clock), and after every daily job, it ends or
// queues again the work clients see queued or testing that has had no outcome for longer than
// its queue's deadline. Its own work does not grow with the number of websites.
package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/fanout"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/ux"
)

// The daily jobs an event may name (the fan-out's). AWS runs each from a rule of its own (at an
// hour of its own); an event naming none, as the local clock and make daily send, runs all
// of them.
const (
	JobAudits    = fanout.JobAudits
	JobMultistep = fanout.JobMultistep
	JobUX        = fanout.JobUX
	JobExports   = fanout.JobExports
	JobRetention = fanout.JobRetention
)

// Jobs are the daily jobs, in the order an event naming none runs them.
var Jobs = fanout.Jobs

// JobSweep is what the sweep rule's event names: none of the daily jobs, only the sweep of
// overdue work that follows every invocation.
const JobSweep = "sweep"

// PurgeGrace is how much older than its settle time a pending purge must be before the daily
// run queues it again: its message was lost, or its worker stopped half-way.
const PurgeGrace = 15 * time.Minute

// Scheduler starts the daily work of every pipeline.
type Scheduler struct {
	store  *store.Store
	fanout *fanout.Queue
	audits *audit.Queue
	runs   *multistep.Queue
	purges *purge.Queue
	// auditQueue and runQueue give the deadlines of overdue work (their Settings.Deadline).
	auditQueue, runQueue *queue.Queue
	// purgeSettle is how long a purge's marker stays on purpose (OPENVITALS_PURGE_SETTLE_SECONDS).
	purgeSettle time.Duration
	log         *slog.Logger
}

// Queues are the queues the scheduler starts work on, or sweeps the overdue work of.
type Queues struct {
	Fanout, Audit, Multistep, Purge *queue.Queue
}

// New returns a Scheduler over the table and q; a purge's marker stays purgeSettle on purpose.
func New(st *store.Store, q Queues, purgeSettle time.Duration, log *slog.Logger) *Scheduler {
	return &Scheduler{
		store:       st,
		fanout:      fanout.NewQueue(q.Fanout),
		audits:      audit.NewQueue(st, q.Audit, log),
		runs:        multistep.NewQueue(st, q.Multistep, log),
		purges:      purge.NewQueue(q.Purge),
		auditQueue:  q.Audit,
		runQueue:    q.Multistep,
		purgeSettle: purgeSettle,
		log:         log,
	}
}

// Result is what a daily run did.
type Result struct {
	// Day is the UTC day the run queued for.
	Day string `json:"day"`
	// Fanouts are the daily jobs whose fan-out the run started; the fan-out workers queue
	// their work (see Fanned).
	Fanouts []string `json:"fanouts,omitempty"`
	// Purges is how many lost purges were queued again.
	Purges int `json:"purges"`
	// Overdue is what the sweep of overdue work did to series tests and multistep runs.
	Overdue Overdue `json:"overdue"`
}

// Overdue is what a sweep of overdue work did, per kind of work.
type Overdue struct {
	SeriesTests queue.Swept `json:"seriesTests"`
	Runs        queue.Swept `json:"runs"`
}

// Handle is the scheduler function's Lambda handler. It starts the fan-out of the jobs the
// event's detail names ({"jobs": ["audits"]}; all of them when it names none; none but the
// sweep for {"jobs": ["sweep"]}) for the UTC day of the event's time, then sweeps the overdue
// work (see Sweep) as of that time. A fan-out queues nothing it queued already that day, and a
// sweep changes only what is overdue, so EventBridge may retry.
func (s *Scheduler) Handle(ctx context.Context, ev events.CloudWatchEvent) (Result, error) {
	jobs, err := jobsOf(ev)
	if err != nil {
		return Result{}, err
	}
	at := ev.Time
	if at.IsZero() {
		at = time.Now()
	}
	res := Result{Day: model.Day(at)}
	var errs []error
	for _, job := range jobs {
		if err := s.fanout.Start(ctx, res.Day, job); err != nil {
			errs = append(errs, err)
			continue
		}
		res.Fanouts = append(res.Fanouts, job)
	}
	if len(res.Fanouts) > 0 {
		s.log.InfoContext(ctx, "daily fan-out started", "day", res.Day, "jobs", res.Fanouts)
	}
	// Lost purges with the daily jobs (a purge that keeps failing is queued again once a
	// day, not at every sweep).
	if len(jobs) > 0 {
		var err error
		res.Purges, err = purge.Sweep(ctx, s.store, s.purges, s.purgeSettle+PurgeGrace)
		if err != nil {
			s.log.ErrorContext(ctx, "sweep pending purges", "err", err)
		} else if res.Purges > 0 {
			s.log.InfoContext(ctx, "queued pending purges again", "purges", res.Purges)
		}
	}
	if res.Overdue, err = s.Sweep(ctx, at); err != nil {
		errs = append(errs, fmt.Errorf("sweep overdue work: %w", err))
	}
	if len(errs) > 0 {
		return res, errs[0]
	}
	return res, nil
}

// Sweep ends or queues again, as of now, the series tests and multistep runs that have had no
// outcome for longer than their queue's deadline (Settings.Deadline of the queue's own
// settings: a visibility timeout for each delivery). See audit.Queue.Overdue and
// multistep.Queue.Overdue.
func (s *Scheduler) Sweep(ctx context.Context, now time.Time) (Overdue, error) {
	var o Overdue
	audits, err := s.auditQueue.Settings(ctx)
	if err != nil {
		return o, err
	}
	runs, err := s.runQueue.Settings(ctx)
	if err != nil {
		return o, err
	}
	var err2 error
	o.SeriesTests, err = s.audits.Overdue(ctx, now, audits.Deadline())
	o.Runs, err2 = s.runs.Overdue(ctx, now, runs.Deadline())
	s.logSwept(ctx, "overdue work swept", o)
	return o, errors.Join(err, err2)
}

// Requeue queues again every series test and multistep run that has no outcome, whatever its
// age: the local service does so when it starts, as the SQS stand-in lost the messages of the
// run before (see audit.Queue.Requeue and multistep.Queue.Requeue).
func (s *Scheduler) Requeue(ctx context.Context, now time.Time) (Overdue, error) {
	var o Overdue
	var err, err2 error
	o.SeriesTests, err = s.audits.Requeue(ctx, now)
	o.Runs, err2 = s.runs.Requeue(ctx, now)
	s.logSwept(ctx, "unfinished work queued again", o)
	return o, errors.Join(err, err2)
}

func (s *Scheduler) logSwept(ctx context.Context, msg string, o Overdue) {
	if o == (Overdue{}) {
		return
	}
	s.log.InfoContext(ctx, msg, "seriesTests", o.SeriesTests, "runs", o.Runs)
}

// jobsOf reads the jobs an event's detail names.
func jobsOf(ev events.CloudWatchEvent) ([]string, error) {
	var detail struct {
		Jobs []string `json:"jobs"`
	}
	if len(ev.Detail) > 0 {
		if err := json.Unmarshal(ev.Detail, &detail); err != nil {
			return nil, fmt.Errorf("daily event detail: %w", err)
		}
	}
	if len(detail.Jobs) == 0 {
		return Jobs, nil
	}
	var jobs []string
	for _, j := range Jobs {
		if slices.Contains(detail.Jobs, j) {
			jobs = append(jobs, j)
		}
	}
	for _, j := range detail.Jobs {
		if j != JobSweep && !slices.Contains(Jobs, j) {
			return nil, fmt.Errorf("daily event: unknown job %q", j)
		}
	}
	return jobs, nil
}

// Queued is what the fan-out of a daily run queued, per pipeline.
type Queued struct {
	Day    string
	Audits []audit.Job
	Runs   []multistep.Job
	UX     []ux.Job
}

// Fanned tells whether the fan-out a daily run started at since (res) is over: the whole
// websites listing walked, and the share of every website that existed then queued. When it
// is, it returns what the fan-out queued from since on (a part queued earlier that day, by
// another run, is not this run's). It reads a few claims per website: for make daily, not for
// a deployment's thousands of websites.
func (s *Scheduler) Fanned(ctx context.Context, res Result, since time.Time) (Queued, bool, error) {
	q := Queued{Day: res.Day}
	for _, job := range res.Fanouts {
		listed, err := fanout.Listed(ctx, s.store, res.Day, job)
		if err != nil || !listed {
			return q, false, err
		}
	}
	sites, err := s.store.AllWebsites(ctx)
	if err != nil {
		return q, false, err
	}
	for _, ref := range sites {
		w, err := s.store.Website(ctx, ref.Account, ref.Website)
		if model.IsNotFound(err) {
			continue
		}
		if err != nil {
			return q, false, err
		}
		for _, job := range res.Fanouts {
			c, err := s.store.FanoutClaim(ctx, store.WebsiteFanoutKey(ref, res.Day, job, ""))
			switch {
			case model.IsNotFound(err) && w.Created.Before(since):
				return q, false, nil // listed, its message still to come
			case model.IsNotFound(err):
				continue // made after the run started, and after the listing
			case err != nil:
				return q, false, err
			case !c.Done:
				return q, false, nil
			}
			if err := s.add(ctx, &q, w, job, c, since); err != nil {
				return q, false, err
			}
		}
	}
	return q, true, nil
}

// add adds to q what a website's share of a job, claimed by c, queued since a time.
func (s *Scheduler) add(ctx context.Context, q *Queued, w model.Website, job string, c model.FanoutClaim, since time.Time) error {
	switch job {
	case JobAudits:
		jobs, err := audit.Fanned(ctx, s.store, w, q.Day, c, since)
		q.Audits = append(q.Audits, jobs...)
		return err
	}
	if c.Started.Before(since) {
		return nil
	}
	ref := model.SiteRef{Account: w.Account, Website: w.ID}
	switch job {
	case JobMultistep:
		for _, key := range c.Items {
			j, err := multistep.JobOfKey(ref, key)
			if err != nil {
				return err
			}
			q.Runs = append(q.Runs, j)
		}
	case JobUX:
		q.UX = append(q.UX, ux.Job{Account: w.Account, Website: w.ID, Day: q.Day, Queued: c.Queued})
	}
	return nil
}

// Progress is how far the work of a daily run has come, per pipeline that tracks it.
type Progress struct {
	Audits, Runs, UX queue.Progress
}

// Settled tells whether every job has an outcome: none remains or waits for a retry.
func (p Progress) Settled() bool {
	for _, q := range []queue.Progress{p.Audits, p.Runs, p.UX} {
		if q.Remaining > 0 || q.Retrying > 0 {
			return false
		}
	}
	return true
}

// Track reports the progress of what a daily run's fan-out queued, from what the workers
// stored.
func (s *Scheduler) Track(ctx context.Context, q Queued) (Progress, error) {
	var p Progress
	var err error
	if p.Audits, err = audit.Track(ctx, s.store, q.Audits); err != nil {
		return p, err
	}
	if p.Runs, err = multistep.Track(ctx, s.store, q.Runs); err != nil {
		return p, err
	}
	p.UX, err = ux.Track(ctx, s.store, q.UX)
	return p, err
}
