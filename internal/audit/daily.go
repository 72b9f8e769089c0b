package audit

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/bits"
	"sync"
	"time"

	"github.com/openvitals/openvitals/internal/fanout"
	"github.com/openvitals/openvitals/internal/model"
	"github.com/openvitals/openvitals/internal/parallel"
	"github.com/openvitals/openvitals/internal/store"
)

// PagesPerShard is about how many pages one shard of a website's daily audits holds: the unit
// the fan-out claims, queues (twice as many audits, one per device) and, when the attempt
// queuing it stopped half-way, queues again. Two claim writes a shard, where a marker per page
// and device would be 200.
const PagesPerShard = 100

// Shards is how many shards the daily audits of a website of n pages are split into.
func Shards(n int) int { return max(1, (n+PagesPerShard-1)/PagesPerShard) }

// shardOf is the shard, of n, that a page belongs to: its ID hashed over the shards, so that a
// page stays in its shard all day, whatever pages are added or deleted.
func shardOf(page string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(page))
	i, _ := bits.Mul64(h.Sum64(), uint64(n))
	return int(i)
}

// shardName names shard i in its claim's key and in its messages.
func shardName(i int) string { return fmt.Sprintf("%04d", i) }

// shardsAtOnce is how many shards of a website DailyWebsite queues at once, each in parallel
// requests of its own (queue.SendAll).
const shardsAtOnce = 4

// SetTakeoverDelay sets how long the audits that an attempt queues again after a takeover
// wait in the queue (queue.MaxDelay, the audit worker's longest run, unless set; tests set 0).
func (s *Queue) SetTakeoverDelay(d time.Duration) { s.takeoverDelay = d }

// DailyWebsite queues the day's audits of a website's pages on both devices, in the c.Shards
// shards the day's first attempt split them into (c is the claim of the website's share of
// the day's audits), each shard once: a shard claimed and finished is never queued again that
// day, however often this runs. It returns how many audits it queued.
//
// A shard whose attempt stopped half-way is taken over by the next attempt, which queues all of
// it again under its own attempt number. The stopped attempt's copies still queued are dropped
// by the audit worker (Superseded), and the new ones wait in the queue as long as an audit may
// run (queue.MaxDelay, the worker's timeout), so that the audit of a stopped attempt's copy
// that is running finishes first and is seen.
func (s *Queue) DailyWebsite(ctx context.Context, w model.Website, pages []model.Page, day string, c model.FanoutClaim, lease time.Time) (int, error) {
	ref := model.SiteRef{Account: w.Account, Website: w.ID}
	shards := make([][]model.Page, max(c.Shards, 1))
	for _, p := range pages {
		i := shardOf(p.ID, len(shards))
		shards[i] = append(shards[i], p)
	}
	var mu sync.Mutex
	queued := 0
	errs := parallel.Do(shardsAtOnce, len(shards), func(i int) error {
		shard := shards[i]
		if len(shard) == 0 {
			return nil
		}
		k := store.WebsiteFanoutKey(ref, day, fanout.JobAudits, shardName(i))
		sc, ran, err := fanout.Run(ctx, s.store, k, lease, 0, func(ctx context.Context, sc model.FanoutClaim) (model.FanoutDone, error) {
			return s.sendShard(ctx, w, shard, day, shardName(i), sc.Attempt)
		})
		if err != nil {
			return fmt.Errorf("shard %s: %w", shardName(i), err)
		}
		if ran {
			mu.Lock()
			queued += sc.Count
			mu.Unlock()
		}
		return nil
	})
	return queued, errors.Join(errs...)
}

// sendShard queues the audits of a shard's pages on both devices for an attempt.
func (s *Queue) sendShard(ctx context.Context, w model.Website, pages []model.Page, day, shard string, attempt int) (model.FanoutDone, error) {
	now := time.Now().UTC()
	d := model.FanoutDone{Queued: now, Items: make([]string, len(pages))}
	jobs := make([]Job, 0, len(pages)*len(Devices))
	for i, p := range pages {
		d.Items[i] = p.ID
		for _, dev := range Devices {
			jobs = append(jobs, Job{Account: w.Account, Website: w.ID, Page: p.ID, Device: dev, Queued: now, Day: day, Shard: shard, Attempt: attempt})
		}
	}
	d.Count = len(jobs)
	delay := time.Duration(0)
	if attempt > 1 {
		delay = s.takeoverDelay
		s.log.WarnContext(ctx, "queuing a shard of daily audits again: the attempt before stopped half-way",
			"website", w.ID, "day", day, "shard", shard, "attempt", attempt, "audits", len(jobs), "delay", delay)
	}
	if err := s.queue.SendAll(ctx, jobs, delay); err != nil {
		return d, fmt.Errorf("queue audits: %w", err)
	}
	return d, nil
}

// Superseded says why the audit of a daily message must not run, or "" when it must: the
// claim of its shard names a later attempt, which queued the page again; or the message is
// itself such a later attempt's, and the day's audit of its page and device has run since the
// shard was first claimed, from the stopped attempt's copy. It costs one read of the shard's
// claim a daily audit (a claim is kept longer than a message: store.FanoutClaimTTL), and a
// few more for the rare copies of a takeover. Audits on demand, of series and of experiments
// are never superseded.
func Superseded(ctx context.Context, st *store.Store, w model.Website, j Job) (string, error) {
	if j.Shard == "" || j.Attempt == 0 {
		return "", nil
	}
	c, err := st.FanoutClaim(ctx, store.WebsiteFanoutKey(model.SiteRef{Account: w.Account, Website: w.ID}, j.Day, fanout.JobAudits, j.Shard))
	if model.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if c.Attempt > j.Attempt {
		return fmt.Sprintf("attempt %d of its shard %s queued it again", c.Attempt, j.Shard), nil
	}
	if j.Attempt == 1 {
		return "", nil
	}
	results, err := st.LabResults(ctx, w, j.Page, j.Device, j.Day, j.Day)
	if err != nil {
		return "", err
	}
	for _, r := range results {
		if !r.Audited.Before(c.Started) {
			return "the day's audit ran already, from a copy that a stopped attempt queued", nil
		}
	}
	last, err := st.LastLabError(ctx, w, j.Page, j.Device)
	if err != nil && !model.IsNotFound(err) {
		return "", err
	}
	if err == nil && last.Final && !last.At.Before(c.Started) {
		return "the day's audit failed for good already, from a copy that a stopped attempt queued", nil
	}
	return "", nil
}

// Fanned returns the audits of a website that its share of a day's fan-out queued since a
// time, from the claims of its shards (c is the claim of its share).
func Fanned(ctx context.Context, st *store.Store, w model.Website, day string, c model.FanoutClaim, since time.Time) ([]Job, error) {
	ref := model.SiteRef{Account: w.Account, Website: w.ID}
	var jobs []Job
	for i := range c.Shards {
		sc, err := st.FanoutClaim(ctx, store.WebsiteFanoutKey(ref, day, fanout.JobAudits, shardName(i)))
		if model.IsNotFound(err) {
			continue // a shard without pages
		}
		if err != nil {
			return jobs, err
		}
		if !sc.Done || sc.Started.Before(since) {
			continue
		}
		for _, p := range sc.Items {
			for _, dev := range Devices {
				jobs = append(jobs, Job{Account: w.Account, Website: w.ID, Page: p, Device: dev, Queued: sc.Queued, Day: day,
					Shard: shardName(i), Attempt: sc.Attempt})
			}
		}
	}
	return jobs, nil
}
