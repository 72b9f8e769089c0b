package queue_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openvitals/openvitals/internal/queue"
	"github.com/openvitals/openvitals/internal/testing/awstest"
)

// A queue's settings are read back from the queue itself, as its creator set them (the stack
// in AWS), and its deadline is a visibility timeout for each delivery.
func TestSettingsAreTheQueuesOwn(t *testing.T) {
	clients := awstest.Clients(t)
	want := queue.Settings{VisibilityTimeout: 45 * time.Second, MaxReceives: 4, Retention: queue.MaxRetention}
	q := awstest.Queue(t, clients, want)
	got, err := q.Settings(context.Background())
	if err != nil || got != want {
		t.Fatalf("settings %+v (%v), want %+v", got, err, want)
	}
	if d := got.Deadline(); d != 3*time.Minute {
		t.Errorf("deadline %s, want 3m0s", d)
	}
	// A queue created without a retention keeps SQS's default.
	plain := awstest.Queue(t, clients, queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: 3})
	if got, err := plain.Settings(context.Background()); err != nil || got.Retention != queue.DefaultRetention {
		t.Errorf("retention of a queue created without one: %v (%v), want %v", got.Retention, err, queue.DefaultRetention)
	}
}

// SendAll sends every value once, in parallel requests of ten, and a delay holds them back.
func TestSendAll(t *testing.T) {
	clients := awstest.Clients(t)
	ctx := context.Background()
	q := awstest.Queue(t, clients, queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: 3})
	values := make([]any, 95)
	for i := range values {
		values[i] = i
	}
	if err := q.SendAll(ctx, values, 0); err != nil {
		t.Fatal(err)
	}
	got := awstest.Receive(t, q, len(values))
	var ns []int
	for _, body := range got {
		n, err := strconv.Atoi(body)
		if err != nil {
			t.Fatalf("message %q", body)
		}
		ns = append(ns, n)
	}
	slices.Sort(ns)
	if len(ns) != len(values) || ns[0] != 0 || ns[len(ns)-1] != len(values)-1 || len(slices.Compact(ns)) != len(values) {
		t.Errorf("received %v, want 0 to %d once each", ns, len(values)-1)
	}
	if err := q.SendAll(ctx, values[:3], time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := awstest.Receive(t, q, 0); len(got) != 0 {
		t.Errorf("%d messages delayed by a minute were delivered at once", len(got))
	}
	if err := q.SendAll(ctx, values[:1], queue.MaxDelay+time.Second); err == nil {
		t.Error("a delay over MaxDelay was accepted")
	}
}

// A typed queue sends what its consumer would take, and nothing of a send that holds a message
// its consumer would refuse.
func TestTypedQueueChecks(t *testing.T) {
	clients := awstest.Clients(t)
	ctx := context.Background()
	raw := awstest.Queue(t, clients, queue.Settings{VisibilityTimeout: time.Minute, MaxReceives: 3})
	q := queue.Typed[job](raw)
	if err := q.Send(ctx, job{}); err == nil || !strings.Contains(err.Error(), "a job needs a name") {
		t.Errorf("a message without a name: %v, want its check's error", err)
	}
	if n, err := q.SendBatch(ctx, []job{{Name: "a"}, {}, {Name: "c"}}); err == nil || n != 0 {
		t.Errorf("a batch with a bad message sent %d (%v), want none and an error", n, err)
	}
	if err := q.SendAll(ctx, []job{{Name: "a"}, {}}, 0); err == nil {
		t.Error("SendAll with a bad message succeeded")
	}
	if n, err := q.SendBatch(ctx, []job{{Name: "a"}, {Name: "b"}}); err != nil || n != 2 {
		t.Fatalf("sent %d (%v), want 2", n, err)
	}
	if err := q.Send(ctx, job{Name: "c"}); err != nil {
		t.Fatal(err)
	}
	got := awstest.Receive(t, raw, 3)
	slices.Sort(got)
	if want := []string{`{"name":"a"}`, `{"name":"b"}`, `{"name":"c"}`}; !slices.Equal(got, want) {
		t.Errorf("received %q, want %q: the good messages only", got, want)
	}
}
