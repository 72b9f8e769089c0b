package queue_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/openvitals/openvitals/internal/queue"
)

// job is a message that needs a name.
type job struct {
	Name string `json:"name"`
}

func (j job) Check() error {
	if j.Name == "" {
		return errors.New("a job needs a name")
	}
	return nil
}

func records(bodies ...string) events.SQSEvent {
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: string(rune('a' + i)), Body: b,
			Attributes: map[string]string{"ApproximateReceiveCount": "2"}})
	}
	return ev
}

func failedIDs(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestEachReportsFailedAndUnreadableMessages shows the one policy of every consumer: a message
// whose handling fails and a message that cannot be read (not JSON, or failing Check) are both
// reported as batch item failures, so that SQS delivers them again and finally moves them to
// the dead-letter queue; the others are handled once, in order, with their attempt.
func TestEachReportsFailedAndUnreadableMessages(t *testing.T) {
	var handled []string
	h := queue.Each(quiet, func(_ context.Context, d queue.Delivery[job]) error {
		if d.Attempt != 2 {
			t.Errorf("attempt %d, want 2", d.Attempt)
		}
		handled = append(handled, d.Body.Name)
		if d.Body.Name == "fails" {
			return errors.New("boom")
		}
		return nil
	})
	resp, err := h(context.Background(), records(`{"name":"one"}`, `{not json`, `{"name":"fails"}`, `{}`, `{"name":"two"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := failedIDs(resp), []string{"b", "d", "c"}; !slices.Equal(got, want) {
		t.Errorf("failures %v, want %v (the unreadable b and d, the failed c)", got, want)
	}
	if want := []string{"one", "fails", "two"}; !slices.Equal(handled, want) {
		t.Errorf("handled %v, want %v", handled, want)
	}
}

// TestBatchHandsOverReadableMessagesTogether shows a batch consumer gets every readable message
// at once and that the IDs it returns are reported with the unreadable ones.
func TestBatchHandsOverReadableMessagesTogether(t *testing.T) {
	calls := 0
	h := queue.Batch(quiet, func(_ context.Context, ds []queue.Delivery[job]) []string {
		calls++
		if len(ds) != 2 || ds[0].Body.Name != "x" || ds[1].ID != "c" {
			t.Errorf("deliveries %+v, want x (a) and y (c)", ds)
		}
		return []string{ds[1].ID}
	})
	resp, _ := h(context.Background(), records(`{"name":"x"}`, `[]`, `{"name":"y"}`))
	if got, want := failedIDs(resp), []string{"b", "c"}; !slices.Equal(got, want) || calls != 1 {
		t.Errorf("failures %v after %d calls, want %v after 1", got, calls, want)
	}
	// Nothing readable: the handler is not called.
	resp, _ = h(context.Background(), records(`nope`))
	if got := failedIDs(resp); !slices.Equal(got, []string{"a"}) || calls != 1 {
		t.Errorf("failures %v after %d calls, want [a] after 1", got, calls)
	}
}

func TestProgressAdd(t *testing.T) {
	queued := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	before, after := queued.Add(-time.Hour), queued.Add(time.Minute)
	var p queue.Progress
	for _, a := range []queue.Attempted{
		{Queued: queued, Finished: after},                                // done
		{Queued: queued, Finished: before, Failed: after, Attempt: 3},    // failed for good
		{Queued: queued, Failed: after, Attempt: 1},                      // retrying
		{Queued: queued, Finished: before},                               // an older result: remaining
		{Queued: queued, Failed: before, Attempt: queue.MaxReceives + 1}, // an older failure: remaining
	} {
		p.Add(a, queue.MaxReceives)
	}
	if want := (queue.Progress{Done: 1, Failed: 1, Retrying: 1, Remaining: 2}); p != want {
		t.Errorf("progress %+v, want %+v", p, want)
	}
}

// TestSendOnceForgetsWhatWasNotSent shows a daily job sends only what it marks first, and that a
// failed send forgets the marks of the unsent jobs, so that a rerun sends exactly those.
func TestSendOnceForgetsWhatWasNotSent(t *testing.T) {
	ctx := context.Background()
	marked := map[string]bool{"old": true}
	mark := func(_ context.Context, j string) (bool, error) {
		if marked[j] {
			return false, nil
		}
		marked[j] = true
		return true, nil
	}
	unmark := func(_ context.Context, j string) error { delete(marked, j); return nil }
	var sent []string
	failAfter := 2
	send := func(_ context.Context, js []string) (int, error) {
		n := min(failAfter, len(js))
		sent = append(sent, js[:n]...)
		if n < len(js) {
			return n, errors.New("throttled")
		}
		return n, nil
	}
	got, err := queue.SendOnce(ctx, []string{"old", "a", "b", "c", "d"}, mark, unmark, send)
	if err == nil || !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("first run sent %v (%v), want a and b and an error", got, err)
	}
	if marked["c"] || marked["d"] || !marked["a"] {
		t.Errorf("marks after the failure %v, want a and b kept, c and d forgotten", marked)
	}
	failAfter = 10
	got, err = queue.SendOnce(ctx, []string{"old", "a", "b", "c", "d"}, mark, unmark, send)
	if err != nil || !slices.Equal(got, []string{"c", "d"}) {
		t.Errorf("rerun sent %v (%v), want c and d", got, err)
	}
	if !slices.Equal(sent, []string{"a", "b", "c", "d"}) {
		t.Errorf("sent %v, each job once", sent)
	}
}
