package rum

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/queue"
)

// maxViewsPerFold is how many views one aggregator message may carry after rebatching: about
// 300 bytes each on the queue, well under SQS's 256 KB.
const maxViewsPerFold = 400

// Rebatcher sits between collect and the aggregator. In AWS every collect invocation sends its
// own message of one view, and the aggregator rewrites every table a batch touches, so folding
// ten single views at a time would cost some 150 table writes per ten views. The rebatcher
// takes the beacon queue in large batches (its event source waits up to a batching window),
// regroups the views per website into messages of up to 400 views and sends them to the
// aggregator's FIFO queue. Locally, collect's group commit fills messages already.
type Rebatcher struct {
	out GroupSender
	log *slog.Logger
}

// NewRebatcher returns a Rebatcher sending to the aggregator's queue.
func NewRebatcher(out GroupSender, log *slog.Logger) *Rebatcher {
	return &Rebatcher{out: out, log: log}
}

// HandleSQS regroups a batch of the beacon queue. A message whose views could not be sent is
// reported as a batch item failure and comes back; views of the others are sent once.
// The new batches' IDs derive from the source messages, so a retry of the same regrouping
// is deduplicated by the FIFO queue and by the aggregator.
func (r *Rebatcher) HandleSQS(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	type group struct {
		batch   Batch
		sources []string // SQS message IDs the views came from
	}
	var groups []*group
	open := map[string]*group{}
	for _, rec := range ev.Records {
		var b Batch
		if err := json.Unmarshal([]byte(rec.Body), &b); err != nil || b.Account == "" || b.Website == "" {
			r.log.ErrorContext(ctx, "drop unreadable beacon message", "message", rec.MessageId)
			continue
		}
		for _, v := range b.Views {
			g := open[b.Website]
			if g == nil || len(g.batch.Views) >= maxViewsPerFold {
				g = &group{batch: Batch{Account: b.Account, Website: b.Website}}
				open[b.Website] = g
				groups = append(groups, g)
			}
			g.batch.Views = append(g.batch.Views, v)
			if n := len(g.sources); n == 0 || g.sources[n-1] != rec.MessageId {
				g.sources = append(g.sources, rec.MessageId)
			}
		}
	}
	msgs := make([]queue.GroupMessage, len(groups))
	for i, g := range groups {
		h := sha256.New()
		for _, id := range g.sources {
			h.Write([]byte(id))
			h.Write([]byte{0})
		}
		g.batch.ID = hex.EncodeToString(h.Sum(nil)[:16])
		body, err := json.Marshal(g.batch)
		if err != nil {
			return events.SQSEventResponse{}, err
		}
		msgs[i] = queue.GroupMessage{Group: g.batch.Website, DedupID: g.batch.ID, Body: body}
	}
	failed := map[string]bool{}
	for i, err := range r.out.SendGroups(ctx, msgs) {
		if err != nil {
			r.log.ErrorContext(ctx, "send regrouped views; their messages will come back", "website", groups[i].batch.Website, "err", err)
			for _, id := range groups[i].sources {
				failed[id] = true
			}
		}
	}
	var resp events.SQSEventResponse
	for _, rec := range ev.Records {
		if failed[rec.MessageId] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
		}
	}
	r.log.InfoContext(ctx, "regrouped beacons", "messages", len(ev.Records), "batches", len(msgs), "failed", len(resp.BatchItemFailures))
	return resp, nil
}
