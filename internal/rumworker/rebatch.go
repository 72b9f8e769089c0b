package rumworker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/rum"
)

// maxViewsPerFold is how many views one aggregator message may carry after rebatching: about
// 300 bytes each on the queue, well under SQS's 256 KB; maxFoldBytes bounds the message
// whatever its views' attribution (SQS's limit is 256 KB).
const (
	maxViewsPerFold = 400
	maxFoldBytes    = 200 << 10
)

// encodeParts encodes a regrouped batch in parts; each part's ID derives from the source
// messages and its place, so that the same regrouping retried is deduplicated.
func encodeParts(b rum.WireBatch, sources []string, parts int) (bodies [][]byte, ids []string, err error) {
	size := (len(b.Views) + parts - 1) / parts
	for p := 0; p*size < len(b.Views); p++ {
		h := sha256.New()
		for _, id := range sources {
			h.Write([]byte(id))
			h.Write([]byte{0})
		}
		if parts > 1 {
			fmt.Fprintf(h, "part %d of %d", p, parts)
		}
		part := b
		part.ID = hex.EncodeToString(h.Sum(nil)[:16])
		part.Views = b.Views[p*size : min((p+1)*size, len(b.Views))]
		body, err := json.Marshal(part)
		if err != nil {
			return nil, nil, err
		}
		bodies, ids = append(bodies, body), append(ids, part.ID)
	}
	return bodies, ids, nil
}

// GroupSender sends messages to a FIFO queue.
type GroupSender interface {
	SendGroups(ctx context.Context, msgs []queue.GroupMessage) []error
}

// Rebatcher sits between collect and the aggregator. In AWS every collect invocation sends its
// own message of one view, and the aggregator rewrites every table a batch touches, so folding
// ten single views at a time would cost some 150 table writes per ten views. The rebatcher
// takes the beacon queue in large batches (its event source waits up to a batching window),
// regroups the views per website into messages of up to 400 views and sends them to the
// aggregator's FIFO queue. Locally, collect's group commit fills messages already.
type Rebatcher struct {
	out    GroupSender
	log    *slog.Logger
	handle queue.BatchHandler
}

// NewRebatcherWith returns a Rebatcher sending to the aggregator's queue.
func NewRebatcherWith(out GroupSender, log *slog.Logger) *Rebatcher {
	r := &Rebatcher{out: out, log: log}
	r.handle = queue.Batch(log, r.regroup)
	return r
}

// HandleSQS regroups a batch of the beacon queue. A message whose views could not be sent is
// reported as a batch item failure and comes back; views of the others are sent once. An
// unreadable message is reported failed and ends in the dead-letter queue.
func (r *Rebatcher) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return r.handle(ctx, ev)
}

// regroup sends the views of the readable messages regrouped and returns the IDs of the
// messages whose views could not be sent. The new batches' IDs derive from the source
// messages, so a retry of the same regrouping is deduplicated by the FIFO queue and by the
// aggregator.
func (r *Rebatcher) regroup(ctx context.Context, ds []queue.Delivery[rum.WireBatch]) (failed []string) {
	type group struct {
		batch   rum.WireBatch
		sources []string // SQS message IDs the views came from
	}
	var groups []*group
	open := map[string]*group{}
	for _, d := range ds {
		b := d.Body
		for _, v := range b.Views {
			g := open[b.Website]
			if g == nil || len(g.batch.Views) >= maxViewsPerFold {
				g = &group{batch: rum.WireBatch{Account: b.Account, Website: b.Website}}
				open[b.Website] = g
				groups = append(groups, g)
			}
			g.batch.Views = append(g.batch.Views, v)
			if n := len(g.sources); n == 0 || g.sources[n-1] != d.ID {
				g.sources = append(g.sources, d.ID)
			}
		}
	}
	var msgs []queue.GroupMessage
	var sent []*group
	lost := map[string]bool{} // source messages whose views were not sent
	for _, g := range groups {
		// A message of views with long attribution may pass SQS's size: it goes in parts,
		// each with an ID of its own.
		for parts := 1; ; parts *= 2 {
			bodies, ids, err := encodeParts(g.batch, g.sources, parts)
			if err != nil {
				// Parsed beacons hold finite numbers and strings only; were one not to encode,
				// its sources come back rather than vanish.
				r.log.ErrorContext(ctx, "encode regrouped views", "website", g.batch.Website, "err", err)
				for _, id := range g.sources {
					lost[id] = true
				}
				break
			}
			if parts < len(g.batch.Views) && slices.ContainsFunc(bodies, func(b []byte) bool { return len(b) > maxFoldBytes }) {
				continue
			}
			for i, body := range bodies {
				msgs = append(msgs, queue.GroupMessage{Group: g.batch.Website, DedupID: ids[i], Body: body})
				sent = append(sent, g)
			}
			break
		}
	}
	for i, err := range r.out.SendGroups(ctx, msgs) {
		if err != nil {
			r.log.ErrorContext(ctx, "send regrouped views; their messages will come back", "website", sent[i].batch.Website, "err", err)
			for _, id := range sent[i].sources {
				lost[id] = true
			}
		}
	}
	for _, d := range ds {
		if lost[d.ID] {
			failed = append(failed, d.ID)
		}
	}
	r.log.InfoContext(ctx, "regrouped beacons", "messages", len(ds), "batches", len(msgs), "failed", len(failed))
	return failed
}
