// Package fanoutworker consumes the fan-out queue (see package fanout): a page of the
// websites listing queues the next page and one message per website listed; a website's
// message queues its share of a daily job: its audits a shard of pages at a time (with its
// channels' daily digests), its multistep runs, its user-experience data collection, its
// retention pass (to the purge worker), or writes its Parquet export of the day before. Each
// invocation does one message's work, bounded whatever the number of websites.
package fanoutworker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/audit"
	"github.com/openvitals/openvitals/internal/export"
	"github.com/openvitals/openvitals/internal/fanout"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/multistep"
	"github.com/openvitals/openvitals/internal/notify"
	"github.com/openvitals/openvitals/internal/purge"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
	"github.com/openvitals/openvitals/internal/ux"
)

// Worker queues the work of the fan-out's messages.
type Worker struct {
	store  *store.Store
	fanout *fanout.Queue
	audits *audit.Queue
	runs   *multistep.Queue
	ux     *ux.Queue
	notify *notify.Queue
	// exports writes a website's day of Parquet; purges takes its retention pass.
	exports *export.Exporter
	purges  *purge.Queue
	log     *slog.Logger
	handle  queue.BatchHandler
	// pageSize is how many websites a page of the listing holds (fanout.ListingPageSize).
	pageSize int
}

// Queues are the queues the fan-out's work goes to: its own, and those of the pipelines whose
// daily share of a website it queues.
type Queues struct {
	Fanout, Audit, Multistep, UX, Notify, Purge *queue.Queue
}

// New returns a Worker over the table, queuing each message's work to q, and writing a
// website's exports with exports.
func New(st *store.Store, q Queues, exports *export.Exporter, log *slog.Logger) *Worker {
	w := &Worker{
		store:    st,
		fanout:   fanout.NewQueue(q.Fanout),
		audits:   audit.NewQueue(st, q.Audit, log),
		runs:     multistep.NewQueue(st, q.Multistep, log),
		ux:       ux.NewQueue(q.UX),
		notify:   notify.NewQueue(q.Notify),
		exports:  exports,
		purges:   purge.NewQueue(q.Purge),
		log:      log,
		pageSize: fanout.ListingPageSize,
	}
	w.handle = queue.Each(log, func(ctx context.Context, d queue.Delivery[fanout.Job]) error {
		err := w.Handle(ctx, d.Body)
		if err != nil {
			w.log.WarnContext(ctx, "fan-out message failed; SQS will deliver it again", "day", d.Body.Day, "job", d.Body.Job,
				"listPage", d.Body.ListPage, "website", d.Body.Website, "attempt", d.Attempt, "err", err)
		}
		return err
	})
	return w
}

// HandleSQS is the fan-out worker's Lambda handler. A message whose work failed, or is
// claimed by another live attempt, is reported as a batch item failure and delivered again
// after the queue's visibility timeout (its dead-letter queue after the maximum receives).
func (w *Worker) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return w.handle(ctx, ev)
}

// Handle queues the work of one fan-out message, within the lease of its attempt (the
// invocation's deadline in Lambda).
func (w *Worker) Handle(ctx context.Context, j fanout.Job) error {
	ctx, cancel, lease := fanout.WithLease(ctx, time.Now().UTC())
	defer cancel()
	var err error
	if j.Website == "" {
		err = w.listing(ctx, j, lease)
	} else {
		err = w.website(ctx, j, lease)
	}
	if errors.Is(err, store.ErrSuperseded) {
		// A later attempt took the part over (this one outlived its lease): the part is its.
		w.log.WarnContext(ctx, "fan-out attempt superseded", "day", j.Day, "job", j.Job, "website", j.Website, "err", err)
		return nil
	}
	return err
}

// listing queues the page of the websites listing after the message's cursor: the next page's
// message first, so that the walk goes on while this page's messages are sent, then one
// message per website listed. A page done before (by an earlier run the same day, or this is a
// copy of its message) is walked again, unclaimed: each website's message then finds its share
// done, at the cost of a read, or queues what a lost or failed message left undone.
func (w *Worker) listing(ctx context.Context, j fanout.Job, lease time.Time) error {
	start := time.Now()
	walk := func(ctx context.Context, _ model.FanoutClaim) (model.FanoutDone, error) {
		refs, next, err := w.store.WebsitesAfter(ctx, j.After, w.pageSize)
		if err != nil {
			return model.FanoutDone{}, err
		}
		d := model.FanoutDone{Queued: time.Now().UTC(), Count: len(refs), Next: next}
		if next != "" {
			if err := w.fanout.Send(ctx, []fanout.Job{{Day: j.Day, Job: j.Job, ListPage: j.ListPage + 1, After: next}}); err != nil {
				return d, err
			}
		}
		jobs := make([]fanout.Job, len(refs))
		for i, r := range refs {
			jobs[i] = fanout.Job{Day: j.Day, Job: j.Job, Account: r.Account, Website: r.Website}
		}
		return d, w.fanout.Send(ctx, jobs)
	}
	k := store.ListingFanoutKey(j.Day, j.Job, j.ListPage)
	c, ran, err := fanout.Run(ctx, w.store, k, lease, 0, walk)
	if err == nil && !ran {
		c.FanoutDone, err = walk(ctx, c)
	}
	if err != nil {
		return fmt.Errorf("%s of %s, page %d of the websites: %w", j.Job, j.Day, j.ListPage, err)
	}
	w.log.InfoContext(ctx, "fan-out: websites listed", "day", j.Day, "job", j.Job, "listPage", j.ListPage, "websites", c.Count,
		"last", c.Next == "", "again", !ran, "attempt", c.Attempt, "ms", time.Since(start).Milliseconds())
	return nil
}

// website queues a website's share of the message's job, once a day.
func (w *Worker) website(ctx context.Context, j fanout.Job, lease time.Time) error {
	start := time.Now()
	k := store.WebsiteFanoutKey(j.Ref(), j.Day, j.Job, "")
	// A share done already (a later run, a copy of the message) costs this one read.
	if c, err := w.store.FanoutClaim(ctx, k); err == nil && c.Done {
		return nil
	} else if err != nil && !model.IsNotFound(err) {
		return err
	}
	site, err := w.store.Website(ctx, j.Account, j.Website)
	if model.IsNotFound(err) {
		return nil // deleted since it was listed
	}
	if err != nil {
		return err
	}
	// A website's audits are split into shards by its number of pages; the first attempt of
	// the day fixes how many.
	var pages []model.Page
	shards := 0
	if j.Job == fanout.JobAudits {
		if pages, err = w.store.Pages(ctx, site); err != nil {
			return err
		}
		shards = audit.Shards(len(pages))
	}
	c, ran, err := fanout.Run(ctx, w.store, k, lease, shards, func(ctx context.Context, c model.FanoutClaim) (model.FanoutDone, error) {
		return w.share(ctx, site, pages, j, c, lease)
	})
	if err != nil {
		return fmt.Errorf("%s of %s, website %s: %w", j.Job, j.Day, j.Website, err)
	}
	if ran {
		w.log.InfoContext(ctx, "fan-out: website queued", "day", j.Day, "job", j.Job, "website", site.ID, "queued", c.Count,
			"shards", c.Shards, "attempt", c.Attempt, "ms", time.Since(start).Milliseconds())
	}
	return nil
}

// share queues a website's share of a job for the attempt holding its claim c.
func (w *Worker) share(ctx context.Context, site model.Website, pages []model.Page, j fanout.Job, c model.FanoutClaim, lease time.Time) (model.FanoutDone, error) {
	d := model.FanoutDone{Queued: time.Now().UTC()}
	var err error
	switch j.Job {
	case fanout.JobAudits:
		// The channels' digests go with the day's audits, from the first attempt only: a
		// digest lost with a stopped attempt is made up by the next day's, which covers
		// everything since the last one sent.
		if c.Attempt == 1 {
			if n, err := w.notify.EnqueueDigests(ctx, w.store, site); err != nil {
				w.log.ErrorContext(ctx, "queue daily digests", "website", site.ID, "err", err)
			} else if n > 0 {
				w.log.InfoContext(ctx, "daily digests queued", "website", site.ID, "digests", n)
			}
		}
		d.Count, err = w.audits.DailyWebsite(ctx, site, pages, j.Day, c, lease)
	case fanout.JobMultistep:
		var runs []multistep.Job
		runs, err = w.runs.DailyWebsite(ctx, site, j.Day)
		d.Count = len(runs)
		for _, r := range runs {
			d.Items = append(d.Items, r.Key())
		}
	case fanout.JobUX:
		d.Count = 1
		err = w.ux.DailyWebsite(ctx, j.Ref(), j.Day, d.Queued)
	case fanout.JobExports:
		// The day before the job's, which is over. The export is written here, not queued:
		// it is one website's day, a few reads and four small objects.
		var set model.DataSettings
		if set, err = w.store.DataSettings(ctx, site); err != nil || !set.Exports {
			return d, err
		}
		day, _ := time.Parse(model.DayLayout, j.Day)
		var res export.Result
		res, err = w.exports.Website(ctx, site, day.AddDate(0, 0, -1).Format(model.DayLayout))
		d.Count, d.Items = len(res.Keys), res.Keys
	case fanout.JobRetention:
		d.Count = 1
		err = w.purges.Enqueue(ctx, model.PurgeJob{Account: site.Account, Website: site.ID, Requested: d.Queued, Retention: true})
	}
	return d, err
}
