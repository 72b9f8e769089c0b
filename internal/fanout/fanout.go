// Package fanout is the daily fan-out's protocol: its messages and how the work of a day is
// claimed. The scheduler starts a daily job with one message on the fan-out queue; the
// fanoutworker package walks the websites listing a page at a time (each page queues the next
// one and a message per website), then queues each website's share of the job: its audits, a
// shard of its pages at a time (internal/audit), its multistep runs, its user-experience data
// collection. No invocation's work grows with the number of websites.
//
// Every part (a page of the listing, a website's share, a shard) is claimed in the table
// before anything of it is queued, and marked done once all of it was: a re-run the same
// day, a redelivered message or two runs at once find it done, or held, and queue nothing. A
// worker that stops half-way (a timeout, a crash) leaves its claim held until its lease ends;
// the message's next delivery takes it over and queues that part again, under a new attempt
// number that makes the copies the stopped attempt may have queued void (see
// audit.Superseded). Claims cost a few writes per website, not one per page and device.
package fanout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/store"
)

// The daily jobs, as the scheduler's events name them.
const (
	JobAudits    = "audits"
	JobMultistep = "multistep"
	JobUX        = "ux"
	// JobExports writes each website's Parquet export of the day before (those that turned
	// exports on); JobRetention queues each website's retention pass to the purge worker.
	JobExports   = "exports"
	JobRetention = "retention"
)

// Jobs are the daily jobs, in the order an event naming none runs them.
var Jobs = []string{JobAudits, JobMultistep, JobUX, JobExports, JobRetention}

// ListingPageSize is how many websites one page of the listing holds: one message of the
// fan-out queue reads them and queues one message for each.
const ListingPageSize = 1000

// Job is a message of the fan-out queue: a page of the websites listing of a day's job, or,
// when it names a website, that website's share of the job.
type Job struct {
	// Day is the UTC day (yyyymmdd) the work is for; Job the daily job.
	Day string `json:"day"`
	Job string `json:"job"`
	// ListPage counts the listing's pages from 0; After is the cursor it starts after (""
	// for the first).
	ListPage int    `json:"listPage,omitempty"`
	After    string `json:"after,omitempty"`
	// Account and Website name the website of a website's message.
	Account string `json:"account,omitempty"`
	Website string `json:"website,omitempty"`
}

// Check tells whether a message names a day, a known job and, for a website's, its account.
func (j Job) Check() error {
	if len(j.Day) != 8 {
		return fmt.Errorf("a fan-out message needs a day (yyyymmdd), not %q", j.Day)
	}
	if !known(j.Job) {
		return fmt.Errorf("a fan-out message names an unknown job %q", j.Job)
	}
	if (j.Account == "") != (j.Website == "") || j.ListPage < 0 {
		return errors.New("a website's fan-out message needs both its account and its website")
	}
	return nil
}

func known(job string) bool {
	for _, j := range Jobs {
		if j == job {
			return true
		}
	}
	return false
}

// Ref is the website a website's message names.
func (j Job) Ref() model.SiteRef { return model.SiteRef{Account: j.Account, Website: j.Website} }

// Queue sends fan-out messages.
type Queue struct{ q queue.Of[Job] }

// NewQueue returns a Queue sending to the fan-out queue q.
func NewQueue(q *queue.Queue) *Queue { return &Queue{q: queue.Typed[Job](q)} }

// Start queues the first page of the listing of a day's job.
func (q *Queue) Start(ctx context.Context, day, job string) error {
	if err := q.q.Send(ctx, Job{Day: day, Job: job}); err != nil {
		return fmt.Errorf("start the fan-out of %s: %w", job, err)
	}
	return nil
}

// Send queues fan-out messages, in parallel requests (queue.SendAll).
func (q *Queue) Send(ctx context.Context, jobs []Job) error {
	return q.q.SendAll(ctx, jobs, 0)
}

// DefaultLease is how long an attempt holds its claims when its context has no deadline (the
// local service's worker, tests): shorter than the fan-out queue's visibility timeout, so that
// the message's next delivery finds them free. In Lambda an attempt holds them until its
// function's timeout, when Lambda ends it.
const DefaultLease = time.Minute

// WithLease returns the context an attempt works in and the end of its lease: the context's
// deadline, or DefaultLease from now, which then bounds the context too, so that no attempt
// works past its lease.
func WithLease(ctx context.Context, now time.Time) (context.Context, context.CancelFunc, time.Time) {
	if deadline, ok := ctx.Deadline(); ok {
		ctx, cancel := context.WithCancel(ctx)
		return ctx, cancel, deadline
	}
	lease := now.Add(DefaultLease)
	ctx, cancel := context.WithDeadline(ctx, lease)
	return ctx, cancel, lease
}

// ErrBusy is returned (wrapped) when a part is claimed by another attempt whose lease has not
// ended: the message comes back after the queue's visibility timeout, when that attempt has
// finished the part, or stopped and left it to be taken over.
var ErrBusy = errors.New("claimed by another attempt")

// Run claims k until lease and, when this attempt holds it, queues its work with queue (given
// the claim: its attempt, the day's shards) and finishes it with what queue reports. It
// returns the claim and whether this attempt did the work: false when the part was done
// before. A part another live attempt holds is ErrBusy; queue failing leaves it claimed, for
// the next delivery to take over once the lease has ended.
func Run(ctx context.Context, st *store.Store, k store.FanoutKey, lease time.Time, shards int,
	queue func(context.Context, model.FanoutClaim) (model.FanoutDone, error)) (model.FanoutClaim, bool, error) {
	c, held, err := st.ClaimFanout(ctx, k, time.Now().UTC(), lease, shards)
	if err != nil {
		return c, false, err
	}
	if !held && c.Done {
		return c, false, nil
	}
	if !held {
		return c, false, fmt.Errorf("%w until %s", ErrBusy, c.Lease.Format(time.RFC3339))
	}
	d, err := queue(ctx, c)
	if err != nil {
		return c, false, err
	}
	if err := st.FinishFanout(ctx, k, c.Attempt, d); err != nil {
		return c, false, err
	}
	c.Done, c.FanoutDone = true, d
	return c, true, nil
}

// Listed tells whether the fan-out of a day's job has walked the whole websites listing: every
// page of it done, from the first to one with no page after it.
func Listed(ctx context.Context, st *store.Store, day, job string) (bool, error) {
	for n := 0; ; n++ {
		c, err := st.FanoutClaim(ctx, store.ListingFanoutKey(day, job, n))
		if model.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if !c.Done {
			return false, nil
		}
		if c.Next == "" {
			return true, nil
		}
	}
}
