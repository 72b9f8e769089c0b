package rum

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/openvitals/openvitals/internal/queue"
)

// GroupSender sends FIFO messages; *queue.Queue is one.
type GroupSender interface {
	SendGroups(ctx context.Context, msgs []queue.GroupMessage) []error
}

// MaxViewsPerBatch is the most views collect puts in one message: it keeps a queue message small (a view is well under 1 KB) and a fold quick.
const MaxViewsPerBatch = 40

// Collector queues page views in batches. It commits in groups: while one send is under way,
// the views that arrive meanwhile gather into per-website batches, which go out together in the
// next request (up to ten messages). A lone view goes out at once, so batching costs no latency,
// and under load one request carries many views. Add returns once its view is queued.
type Collector struct {
	q GroupSender

	mu      sync.Mutex
	open    map[string]*pendingBatch // the batch of each website still taking views
	waiting []*pendingBatch          // in arrival order
	sending bool
}

type pendingBatch struct {
	batch Batch
	done  chan struct{}
	err   error
}

// NewCollector returns a Collector sending to q.
func NewCollector(q GroupSender) *Collector {
	return &Collector{q: q, open: map[string]*pendingBatch{}}
}

// Add queues page views of a website (a beacon's) and waits until they are sent. A view
// without an ID gets one here, once: everything downstream recognizes a redelivered view by it.
func (c *Collector) Add(ctx context.Context, account, website string, views ...View) error {
	c.mu.Lock()
	var mine []*pendingBatch
	for _, v := range views {
		if v.ID == "" {
			v.ID = NewViewID(time.Now())
		}
		b := c.open[website]
		if b == nil || len(b.batch.Views) >= MaxViewsPerBatch {
			b = &pendingBatch{batch: Batch{ID: newBatchID(), Account: account, Website: website}, done: make(chan struct{})}
			c.open[website] = b
			c.waiting = append(c.waiting, b)
		}
		b.batch.Views = append(b.batch.Views, v)
		if len(mine) == 0 || mine[len(mine)-1] != b {
			mine = append(mine, b)
		}
	}
	if len(mine) > 0 && !c.sending {
		c.sending = true
		go c.send(context.WithoutCancel(ctx))
	}
	c.mu.Unlock()
	for _, b := range mine {
		select {
		case <-b.done:
			if b.err != nil {
				return b.err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// send sends the waiting batches, ten at a time, until none is left.
func (c *Collector) send(ctx context.Context) {
	for {
		c.mu.Lock()
		if len(c.waiting) == 0 {
			c.sending = false
			c.mu.Unlock()
			return
		}
		n := min(len(c.waiting), 10)
		batches := c.waiting[:n:n]
		c.waiting = c.waiting[n:]
		for _, b := range batches {
			if c.open[b.batch.Website] == b {
				delete(c.open, b.batch.Website)
			}
		}
		c.mu.Unlock()

		msgs := make([]queue.GroupMessage, len(batches))
		for i, b := range batches {
			body, _ := json.Marshal(b.batch) // plain strings and finite numbers
			msgs[i] = queue.GroupMessage{Group: b.batch.Website, DedupID: b.batch.ID, Body: body}
		}
		errs := c.q.SendGroups(ctx, msgs)
		for i, b := range batches {
			b.err = errs[i]
			close(b.done)
		}
	}
}

func newBatchID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ViewerCountry reads the CloudFront-Viewer-Country header where the deployment trusts it
// (CloudFront sets it and drops any a client sent); "" means the aggregator is to place the
// client address instead.
func ViewerCountry(header string, trusted bool) string {
	if !trusted || len(header) != 2 || header[0] < 'A' || header[0] > 'Z' || header[1] < 'A' || header[1] > 'Z' {
		return ""
	}
	return header
}
