package rumworker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/rum"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// views returns n views of day with IDs collected at, as collect makes them.
func viewsAt(n int, day string, at time.Time) []rum.View {
	var vs []rum.View
	for i := range n {
		v := view(day, fmt.Sprintf("/p%d", i%3), "DE", float64(1000+100*i))
		v.ID = rum.NewViewID(at)
		vs = append(vs, v)
	}
	return vs
}

// fold hands events to the aggregator, failing the test on any failure.
func (r *rig) fold(evs ...events.SQSEvent) {
	r.t.Helper()
	for _, ev := range evs {
		resp, err := r.agg.HandleSQS(context.Background(), ev)
		if err != nil || len(resp.BatchItemFailures) > 0 {
			r.t.Fatalf("fold: %v, %v", err, resp.BatchItemFailures)
		}
	}
}

func (r *rig) views(day string) uint64 {
	r.t.Helper()
	return r.report(rum.DimPages, nil, day, day).Views
}

// TestBeaconDeliveredTwiceCountsOnce: the beacon queue delivers the same messages again, and
// the rebatcher appends their views to the log again, regrouped differently (other entries):
// each view still counts once.
func TestBeaconDeliveredTwiceCountsOnce(t *testing.T) {
	r := newRig(t)
	for _, v := range viewsAt(5, "20261115", time.Now()) {
		v.ID = "" // collect gives each view its ID
		if err := r.col.Add(context.Background(), r.site.Account, r.site.ID, v); err != nil {
			t.Fatal(err)
		}
		r.sent = append(r.sent, v)
	}
	var delivered []events.SQSMessage
	awstest.Drain(t, r.beacons, 10, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		delivered = append(delivered, ev.Records...)
		return events.SQSEventResponse{}, nil
	}, func(n int) bool { return n >= 5 })
	regroup := func(msgs ...events.SQSMessage) {
		t.Helper()
		r.rebatch(events.SQSEvent{Records: msgs})
	}
	regroup(delivered...)
	if got := r.views("20261115"); got != 5 {
		t.Fatalf("%d views, want 5", got)
	}
	// Delivered again, in another mix: the rebatcher makes other batches of the same views.
	regroup(delivered[:2]...)
	regroup(delivered[2:]...)
	// And one message twice within one delivery.
	regroup(delivered[3], delivered[3])
	if got := r.views("20261115"); got != 5 {
		t.Errorf("%d views after the beacons were delivered again, want 5", got)
	}
	r.check(rum.DimPages, []string{"lcp"}, "20261115", "20261115")
}

// TestBatchRedeliveredAfterLaterBatchesCountsOnce: aggregator batch X carrying views (as an
// earlier version queued them), then Y, then X again (sent again after the FIFO queue's
// deduplication window, or redriven from the dead-letter queue days later): X counts once.
func TestBatchRedeliveredAfterLaterBatchesCountsOnce(t *testing.T) {
	for _, tc := range []struct {
		name      string
		collected time.Time
	}{
		{"now", time.Now()},
		// A redrive up to the queues' retention: the views were collected 14 days ago.
		{"after 14 days", time.Now().Add(-14 * 24 * time.Hour)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			day := tc.collected.UTC().Format("20060102")
			x := r.batchEvent("x", viewsAt(8, day, tc.collected))
			y := r.batchEvent("y", viewsAt(5, day, tc.collected))
			r.fold(x, y)
			if got := r.views(day); got != 13 {
				t.Fatalf("%d views, want 13", got)
			}
			r.fold(x)
			if got := r.views(day); got != 13 {
				t.Errorf("%d views after X came again after Y, want 13", got)
			}
			// X's views regrouped with new ones into a batch of another ID.
			z := r.batchEvent("z", append(viewsAt(2, day, tc.collected), r.lastBatch("x")...))
			r.fold(z)
			if got := r.views(day); got != 15 {
				t.Errorf("%d views after X's views came again in batch Z with 2 new ones, want 15", got)
			}
			r.check(rum.DimPages, []string{"lcp"}, day, day)
		})
	}
}

// batchEvent is an aggregator delivery of one batch; views not sent before join r.sent.
func (r *rig) batchEvent(id string, views []rum.View) events.SQSEvent {
	r.t.Helper()
	known := map[string]bool{}
	for _, v := range r.sent {
		known[v.ID] = true
	}
	for _, v := range views {
		if !known[v.ID] {
			r.sent = append(r.sent, v)
		}
	}
	if r.batches == nil {
		r.batches = map[string][]rum.View{}
	}
	r.batches[id] = views
	body, err := json.Marshal(rum.Batch{ID: id, Account: r.site.Account, Website: r.site.ID, Views: views})
	if err != nil {
		r.t.Fatal(err)
	}
	return events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m-" + id, Body: string(body)}}}
}

// lastBatch returns the views batchEvent sent as batch id.
func (r *rig) lastBatch(id string) []rum.View { return r.batches[id] }
